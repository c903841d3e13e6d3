import { INITIAL_EXPENSES, euros, total } from './money.js'
import './App.css'

export default function App() {
  const expenses = INITIAL_EXPENSES

  return (
    <main className="app">
      <header className="top">
        <h1>Trip expenses</h1>
        <p className="subtitle">Lisbon weekend · Ana, Ben and Chloe</p>
      </header>

      <section className="card">
        <h2>Expenses</h2>
        <ul className="expenses">
          {expenses.map((e) => (
            <li key={e.id}>
              <span className="payer">{e.payer}</span>
              <span className="what">{e.description}</span>
              <span className="amount">{euros(e.cents)}</span>
            </li>
          ))}
        </ul>
        <p className="total">
          <span>Total</span>
          <strong>{euros(total(expenses))}</strong>
        </p>
      </section>
    </main>
  )
}
