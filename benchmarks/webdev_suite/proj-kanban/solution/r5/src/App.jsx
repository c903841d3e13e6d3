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

  function moveOn(id) {
    setCards((all) =>
      all.map((card) => {
        if (card.id !== id) return card
        const next = COLUMNS[COLUMNS.indexOf(card.column) + 1]
        return next ? { ...card, column: next } : card
      }),
    )
  }

  function clearDone() {
    setCards((all) => all.filter((card) => card.column !== 'Done'))
  }

  return (
    <div className="page">
      <header className="top">
        <h1>Sprint board</h1>
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
        {COLUMNS.map((column, index) => {
          const inColumn = cards.filter((card) => card.column === column)
          const last = index === COLUMNS.length - 1
          return (
            <section key={column} className={`column column-${index + 1}`}>
              <h2 className="column-head">
                {column} ({inColumn.length})
              </h2>
              {inColumn.length === 0 && <p className="no-cards">No cards here</p>}
              <ul className="cards">
                {inColumn.map((card) => (
                  <li key={card.id} className="card">
                    <span className="card-title">{card.title}</span>
                    {!last && (
                      <button type="button" className="move" onClick={() => moveOn(card.id)}>
                        Move →
                      </button>
                    )}
                  </li>
                ))}
              </ul>
              {column === 'Done' && (
                <button type="button" className="clear" onClick={clearDone}>
                  Clear done
                </button>
              )}
            </section>
          )
        })}
      </main>
    </div>
  )
}
