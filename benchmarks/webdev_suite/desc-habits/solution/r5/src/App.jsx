import { useState } from 'react'
import './App.css'

const FILTERS = [
  { id: 'all', label: 'All' },
  { id: 'done', label: 'Done' },
  { id: 'open', label: 'Open' },
]

// `before`: days in a row the habit was kept up to yesterday.
const START = [
  { id: 1, name: 'Drink water', done: false, before: 4 },
  { id: 2, name: 'Read 20 minutes', done: false, before: 2 },
  { id: 3, name: 'Walk 5000 steps', done: false, before: 0 },
]

const days = (n) => (n === 1 ? '1 day' : `${n} days`)

function WeekDots({ count }) {
  const lit = Math.min(count, 7)
  return (
    <span className="week" aria-hidden="true">
      {Array.from({ length: 7 }, (_, i) => (
        <span key={i} className={i >= 7 - lit ? 'dot lit' : 'dot'} />
      ))}
    </span>
  )
}

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
    setHabits((list) => [...list, { id: nextId, name, done: false, before: 0 }])
    setNextId((n) => n + 1)
    setDraft('')
  }

  const doneCount = habits.filter((h) => h.done).length
  const shown = habits.filter((h) => (filter === 'done' ? h.done : filter === 'open' ? !h.done : true))

  return (
    <main className="app">
      <header className="app-header">
        <h1>Habit tracker</h1>
        <p className="subtitle">Tick what you did today and keep your streaks going.</p>
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
      <table className="habit-table">
        <thead>
          <tr>
            <th scope="col">Habit</th>
            <th scope="col">Today</th>
            <th scope="col">Streak</th>
            <th scope="col" aria-label="Actions" />
          </tr>
        </thead>
        <tbody>
          {shown.map((h) => {
            const streak = h.before + (h.done ? 1 : 0)
            return (
              <tr key={h.id} className={h.done ? 'done' : ''}>
                <td className="habit-name">{h.name}</td>
                <td>
                  <input type="checkbox" aria-label={`${h.name} done today`} checked={h.done} onChange={() => toggle(h.id)} />
                </td>
                <td>
                  <div className="streak">
                    <WeekDots count={streak} />
                    <span>{days(streak)}</span>
                  </div>
                </td>
                <td className="actions">
                  <button type="button" className="delete" onClick={() => remove(h.id)}>Delete</button>
                </td>
              </tr>
            )
          })}
          {shown.length === 0 && (
            <tr>
              <td colSpan={4} className="empty">
                {habits.length === 0 ? 'No habits yet. Add one below.'
                  : filter === 'done' ? 'Nothing ticked yet today.' : 'Everything is ticked. Well done!'}
              </td>
            </tr>
          )}
        </tbody>
      </table>
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
