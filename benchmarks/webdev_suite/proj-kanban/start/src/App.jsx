import { useState } from 'react'
import { COLUMNS, initialCards } from './cards.js'
import './App.css'

export default function App() {
  const [cards] = useState(initialCards)
  return (
    <div className="page">
      <header className="top">
        <h1>Team board</h1>
        <p>What the team is working on this week.</p>
      </header>
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
