import { useState } from 'react'
import './App.css'

const START = [
  { id: 1, name: 'Drink water', done: false },
  { id: 2, name: 'Read 20 minutes', done: false },
  { id: 3, name: 'Walk 5000 steps', done: false },
]

export default function App() {
  const [habits, setHabits] = useState(START)

  const toggle = (id) =>
    setHabits((list) => list.map((h) => (h.id === id ? { ...h, done: !h.done } : h)))

  return (
    <main className="app">
      <header className="app-header">
        <h1>Habit tracker</h1>
        <p className="subtitle">Tick what you did today.</p>
      </header>
      <ul className="habits">
        {habits.map((h) => (
          <li key={h.id} className={h.done ? 'habit done' : 'habit'}>
            <label>
              <input type="checkbox" checked={h.done} onChange={() => toggle(h.id)} />
              <span className="habit-name">{h.name}</span>
            </label>
          </li>
        ))}
      </ul>
    </main>
  )
}
