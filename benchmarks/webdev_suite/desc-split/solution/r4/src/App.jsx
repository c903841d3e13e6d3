import { useState } from 'react'
import Balances from './Balances.jsx'
import ExpenseForm from './ExpenseForm.jsx'
import ExpenseTable from './ExpenseTable.jsx'
import { INITIAL_EXPENSES } from './money.js'
import './App.css'

export default function App() {
  const [expenses, setExpenses] = useState(INITIAL_EXPENSES)
  const add = (expense) =>
    setExpenses((list) => [...list, { ...expense, id: Math.max(0, ...list.map((e) => e.id)) + 1 }])
  const remove = (id) => setExpenses((list) => list.filter((e) => e.id !== id))

  return (
    <main className="app">
      <header className="top">
        <h1>Trip expenses</h1>
        <p className="subtitle">Lisbon weekend · Ana, Ben and Chloe</p>
      </header>

      <ExpenseTable expenses={expenses} onRemove={remove} />

      <ExpenseForm onAdd={add} />

      <Balances expenses={expenses} />
    </main>
  )
}
