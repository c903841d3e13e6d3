import { useState } from 'react'
import './App.css'

const FILTERS = [
  { id: 'all', label: 'All' },
  { id: 'done', label: 'Done' },
  { id: 'open', label: 'Open' },
]

const START = [
  { id: 1, name: 'Drink water', done: false },
  { id: 2, name: 'Read 20 minutes', done: false },
  { id: 3, name: 'Walk 5000 steps', done: false },
]

export default function App() {
  const [habits, setHabits] = useState(START)
  const [draft, setDraft] = useState('')
  const [nextId, setNextId] = useState(START.length + 1)
  const [filter, setFilter] = useState('all')

  const toggle = (id) =>
    setHabits((list) => list.map((h) => (h.id === id ? { ...h, done: !h.done } : h)))
  const remove = (id) => setHabits((list) => list.filter((h) => h.id !== id))

  const add = (e) => {
    e.preventDefault()
    const name = draft.trim()
    if (!name) return
    setHabits((list) => [...list, { id: nextId, name, done: false }])
    setNextId((n) => n + 1)
    setDraft('')
  }

  const doneCount = habits.filter((h) => h.done).length
  const shown = habits.filter((h) => (filter === 'done' ? h.done : filter === 'open' ? !h.done : true))

  return (
    <main className="app">
      <header className="app-header">
        <h1>Habit tracker</h1>
        <p className="subtitle">Tick what you did today.</p>
      </header>
      <p className="counter" aria-live="polite">
        Done today: <strong>{doneCount}</strong> of <strong>{habits.length}</strong>
      </p>
      <div className="filters" role="group" aria-label="Filter habits">
        {FILTERS.map((f) => (
          <button
            key={f.id}
            type="button"
            className={filter === f.id ? 'filter active' : 'filter'}
            aria-pressed={filter === f.id}
            onClick={() => setFilter(f.id)}
          >
            {f.label}
          </button>
        ))}
      </div>
      {habits.length === 0 && <p className="empty">No habits yet. Add one below.</p>}
      {habits.length > 0 && shown.length === 0 && (
        <p className="empty">{filter === 'done' ? 'Nothing ticked yet today.' : 'Everything is ticked. Well done!'}</p>
      )}
      <ul className="habits">
        {shown.map((h) => (
          <li key={h.id} className={h.done ? 'habit done' : 'habit'}>
            <label>
              <input type="checkbox" checked={h.done} onChange={() => toggle(h.id)} />
              <span className="habit-name">{h.name}</span>
            </label>
            <button type="button" className="delete" onClick={() => remove(h.id)}>Delete</button>
          </li>
        ))}
      </ul>
      <form className="add-form" onSubmit={add}>
        <input
          type="text"
          aria-label="New habit"
          placeholder="New habit, e.g. Stretch"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
        />
        <button type="submit">Add</button>
      </form>
    </main>
  )
}
