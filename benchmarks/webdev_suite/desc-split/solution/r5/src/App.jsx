import { useState } from 'react'
import Balances from './Balances.jsx'
import ExpenseForm from './ExpenseForm.jsx'
import ExpenseTable from './ExpenseTable.jsx'
import SettleUp from './SettleUp.jsx'
import { INITIAL_EXPENSES } from './money.js'
import './App.css'

const TABS = [
  { id: 'expenses', label: 'Expenses' },
  { id: 'settle', label: 'Settle up' },
]

export default function App() {
  const [expenses, setExpenses] = useState(INITIAL_EXPENSES)
  const [tab, setTab] = useState('expenses')
  const add = (expense) =>
    setExpenses((list) => [...list, { ...expense, id: Math.max(0, ...list.map((e) => e.id)) + 1 }])
  const remove = (id) => setExpenses((list) => list.filter((e) => e.id !== id))

  return (
    <main className="app">
      <header className="top">
        <h1>Trip expenses</h1>
        <p className="subtitle">Lisbon weekend · Ana, Ben and Chloe</p>
      </header>

      <nav className="tabs" role="tablist" aria-label="Views">
        {TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={`tab-${t.id}`}
            aria-selected={tab === t.id}
            aria-controls={`panel-${t.id}`}
            className={tab === t.id ? 'tab active' : 'tab'}
            onClick={() => setTab(t.id)}
          >
            {t.label}
          </button>
        ))}
      </nav>

      {tab === 'expenses' ? (
        <div role="tabpanel" id="panel-expenses" aria-labelledby="tab-expenses">
          <ExpenseTable expenses={expenses} onRemove={remove} />
          <ExpenseForm onAdd={add} />
          <Balances expenses={expenses} />
        </div>
      ) : (
        <div role="tabpanel" id="panel-settle" aria-labelledby="tab-settle">
          <SettleUp expenses={expenses} />
        </div>
      )}
    </main>
  )
}
