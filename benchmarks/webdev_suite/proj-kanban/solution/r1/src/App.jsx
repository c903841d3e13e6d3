import { useState } from 'react'
import { COLUMNS, initialCards } from './cards.js'
import './App.css'

let nextId = 100

export default function App() {
  const [cards, setCards] = useState(initialCards)
  const [draft, setDraft] = useState('')

  function addCard(event) {
    event.preventDefault()
    const title = draft.trim()
    if (!title) return
    setCards((all) => [...all, { id: nextId++, title, column: 'To do' }])
    setDraft('')
  }

  return (
    <div className="page">
      <header className="top">
        <h1>Team board</h1>
        <p>What the team is working on this week.</p>
      </header>
      <form className="add-form" onSubmit={addCard}>
        <input
          type="text"
          value={draft}
          placeholder="New card"
          aria-label="New card"
          onChange={(event) => setDraft(event.target.value)}
        />
        <button type="submit">Add card</button>
      </form>
      <main className="board">
        {COLUMNS.map((column) => (
          <section key={column} className="column">
            <h2>{column}</h2>
            <ul className="cards">
              {cards
                .filter((card) => card.column === column)
                .map((card) => (
                  <li key={card.id} className="card">
                    {card.title}
                  </li>
                ))}
            </ul>
          </section>
        ))}
      </main>
    </div>
  )
}
