const money = (value) => `£${value.toFixed(2)}`

export default function Basket({ lines, onRemove }) {
  const total = lines.reduce((sum, { book }) => sum + book.price, 0)
  return (
    <aside className="basket" id="basket" aria-label="Your basket">
      <h2>Your basket</h2>
      {lines.length === 0 ? (
        <p className="basket-empty">Your basket is empty</p>
      ) : (
        <ul className="basket-lines">
          {lines.map(({ line, book }) => (
            <li key={line}>
              <span className="basket-title">{book.title}</span>
              <span className="basket-price">{money(book.price)}</span>
              <button type="button" className="remove" onClick={() => onRemove(line)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <p className="basket-total">
        <span>Total</span>
        <strong>{money(total)}</strong>
      </p>
    </aside>
  )
}
