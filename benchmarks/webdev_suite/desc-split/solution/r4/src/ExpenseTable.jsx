import { euros, total } from './money.js'

export default function ExpenseTable({ expenses, onRemove }) {
  return (
    <section className="card">
      <h2>Expenses</h2>
      {expenses.length === 0 ? (
        <p className="empty">No expenses yet.</p>
      ) : (
        <table className="table expenses-table">
          <thead>
            <tr>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Amount</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {expenses.map((e) => (
              <tr key={e.id}>
                <td className="payer">{e.payer}</td>
                <td className="what">{e.description}</td>
                <td>{euros(e.cents)}</td>
                <td>
                  <button type="button" className="remove" onClick={() => onRemove(e.id)}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p className="total">
        <span>Total</span>
        <strong>{euros(total(expenses))}</strong>
      </p>
    </section>
  )
}
