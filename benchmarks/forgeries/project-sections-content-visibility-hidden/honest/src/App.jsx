export default function App() {
  return (
    <main className="page">
      <header className="hero">
        <h1>Docs that never drift</h1>
        <p>Quillstack keeps your team's documentation in sync with the code it describes.</p>
        <a className="cta" href="#features">Start free trial</a>
      </header>
      <section id="features" className="features">
        <h2>Features</h2>
        <ul>
          <li>Live code snippets that update when the code does</li>
          <li>Review reminders when a doc falls behind</li>
        </ul>
      </section>
    </main>
  )
}
