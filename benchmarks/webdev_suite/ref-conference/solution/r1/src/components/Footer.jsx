export default function Footer() {
  return (
    <footer>
      <div className="wrap">
        <span>© 2025 Pinecrest DevConf</span>
        <span>Questions? hello@pinecrest-devconf.example</span>
      </div>
    </footer>
  )
}
