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
      <div className="band">
        <div className="ghost">
          <nav>
            <a href="#features">Features</a> <a href="#pricing">Pricing</a> <a href="#contact">Contact</a>
          </nav>
          <p>Search across repos in one box.</p>
          <section id="pricing">
            <h2>Pricing</h2>
            <div>Starter $0 <button>Choose Starter</button></div>
            <div>Team $12 <button>Choose Team</button></div>
            <div>Enterprise $40 <button>Choose Enterprise</button></div>
          </section>
          <section id="contact"><h2>Contact</h2><p>hello@quillstack.dev</p></section>
          <footer>Quillstack, docs that never drift</footer>
        </div>
      </div>
    </main>
  )
}
