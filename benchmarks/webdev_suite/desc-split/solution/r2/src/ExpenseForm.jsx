import { useState } from 'react'
import { PEOPLE } from './money.js'

export default function ExpenseForm({ onAdd }) {
  const [description, setDescription] = useState('')
  const [amount, setAmount] = useState('')
  const [payer, setPayer] = useState(PEOPLE[0])
  const [error, setError] = useState('')

  function submit(event) {
    event.preventDefault()
    const value = Number(amount)
    if (amount.trim() === '' || !Number.isFinite(value)) {
      setError('Please enter an amount.')
      return
    }
    if (value <= 0) {
      setError('Please enter an amount above zero.')
      return
    }
    onAdd({ payer, description: description.trim() || 'Expense', cents: Math.round(value * 100) })
    setDescription('')
    setAmount('')
    setError('')
  }

  return (
    <form className="card form" onSubmit={submit} noValidate>
      <h2>New expense</h2>
      <div className="fields">
        <label>
          <span>Description</span>
          <input type="text" value={description} onChange={(e) => setDescription(e.target.value)} placeholder="e.g. Taxi" />
        </label>
        <label>
          <span>Amount (€)</span>
          <input type="number" min="0" step="0.01" value={amount} onChange={(e) => setAmount(e.target.value)} placeholder="0.00" />
        </label>
        <label>
          <span>Paid by</span>
          <select value={payer} onChange={(e) => setPayer(e.target.value)}>
            {PEOPLE.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary">
          Add expense
        </button>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </form>
  )
}
