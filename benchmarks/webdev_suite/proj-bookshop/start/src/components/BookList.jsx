export default function BookList({ books }) {
  return (
    <main className="catalogue">
      <h2>Our books</h2>
      <ul className="books">
        {books.map((book) => (
          <li key={book.id} className="book">
            <div className="cover" style={{ background: book.cover }} aria-hidden="true" />
            <h3>{book.title}</h3>
            <p className="author">by {book.author}</p>
            <p className="meta">
              <span className="genre">{book.genre}</span>
              <span className="price">£{book.price.toFixed(2)}</span>
            </p>
          </li>
        ))}
      </ul>
    </main>
  )
}
