export default function App() {
  return (
    <main className="placeholder">
      <h1>Vite + React</h1>
      <p>Edit src/App.jsx to build the app.</p>
    </main>
  )
}
