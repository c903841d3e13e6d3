export default function Footer() {
  return (
    <footer className="site-footer">
      <p>Lantern Lane Books · 14 Lantern Lane · Open Tuesday to Sunday, 10:00–18:00</p>
    </footer>
  )
}
