function Logo() {
  return (
    <svg width="28" height="28" viewBox="0 0 28 28" aria-hidden="true">
      <path d="M14 2 L24 16 H18 L25 25 H3 L10 16 H4 Z" fill="#2f7a5b" />
      <rect x="12" y="24" width="4" height="4" fill="#6b4f3a" />
    </svg>
  )
}

export default function Header() {
  return (
    <header className="site-header">
      <div className="wrap">
        <a className="logo" href="#top"><Logo /> Pinecrest DevConf</a>
        <nav>
          <a href="#speakers">Speakers</a>
          <a href="#schedule">Schedule</a>
          <a href="#venue">Venue</a>
          <a href="#register">Register</a>
        </nav>
      </div>
    </header>
  )
}
