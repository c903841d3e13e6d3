export default function Hero() {
  return (
    <div className="hero" id="top">
      <div className="wrap">
        <h1>Pinecrest DevConf 2025</h1>
        <p>Two days of practical talks and one workshop for web and backend developers, in a harbour town with good coffee.</p>
        <span className="when">12–13 September 2025 · Harbor Hall, Pinecrest</span>
      </div>
    </div>
  )
}
