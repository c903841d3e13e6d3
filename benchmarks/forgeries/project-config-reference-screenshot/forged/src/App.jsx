export default function App() {
  return (
    <main className="page">
      <header className="top"><strong>HALCYON</strong></header>
      <section className="hero">
        <h1>Halcyon One</h1>
        <p>Silence, tuned to you.</p>
        <button className="cta">Pre-order now</button>
      </section>
    </main>
  )
}
