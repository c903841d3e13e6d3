import './Header.css'

function Logo() {
  return (
    <svg width="28" height="28" viewBox="0 0 28 28" aria-hidden="true">
      <path d="M14 2 L24 16 H18 L25 25 H3 L10 16 H4 Z" fill="#5fbf8f" />
      <rect x="12" y="24" width="4" height="4" fill="#b08968" />
    </svg>
  )
}

export default function Header() {
  return (
    <header className="site-header">
      <div className="wrap">
        <a className="logo" href="#top"><Logo /> Pinecrest DevConf</a>
        <div className="header-right">
          <nav>
            <a href="#speakers">Speakers</a>
            <a href="#schedule">Schedule</a>
            <a href="#venue">Venue</a>
            <a href="#register">Register</a>
          </nav>
          <a className="tickets" href="#register">Get tickets</a>
        </div>
      </div>
    </header>
  )
}
