export default function Header() {
  return (
    <header className="site-header">
      <div className="brand">
        <h1>Lantern Lane Books</h1>
        <p className="tagline">A small independent bookshop on the corner of Lantern Lane</p>
      </div>
    </header>
  )
}
