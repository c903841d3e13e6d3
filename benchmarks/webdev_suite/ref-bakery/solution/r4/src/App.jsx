import { useState } from 'react'
import './App.css'
import { BAKES, HOURS, KINDS } from './bakes.js'
import PreOrder from './PreOrder.jsx'

function Logo() {
  return (
    <svg width="28" height="28" viewBox="0 0 28 28" aria-hidden="true">
      <circle cx="14" cy="14" r="13" fill="#e9b97f" />
      <path d="M8 17c2-6 10-6 12 0" stroke="#3b2a20" strokeWidth="2.4" fill="none" strokeLinecap="round" />
      <path d="M11 12l1 4M14 11v5M17 12l-1 4" stroke="#3b2a20" strokeWidth="1.6" strokeLinecap="round" />
    </svg>
  )
}

export default function App() {
  const [basket, setBasket] = useState(0)
  const add = () => setBasket((n) => n + 1)
  const [kind, setKind] = useState('All')
  const shown = kind === 'All' ? BAKES : BAKES.filter((bake) => bake.kind === kind)
  return (
    <>
      <header className="topbar">
        <div className="logo"><Logo /> Marigold Lane</div>
        <div className="topbar-right">
          <nav>
            <a href="#bakes">Bakes</a>
            <a href="#hours">Hours</a>
            <a href="#preorder">Pre-order</a>
            <a href="#visit">Find us</a>
          </nav>
          <span className="basket" aria-live="polite">Basket ({basket})</span>
        </div>
      </header>
      <section className="hero">
        <h1>Marigold Lane Bakery</h1>
        <p>Slow-proved bread and buttery pastries, baked on the corner since 2009.</p>
        <span className="since">Neighbourhood bakery</span>
      </section>
      <main>
        <section id="bakes">
          <h2>Fresh from the oven</h2>
          <p className="lead">Out of the oven by eight every morning, and here until they run out.</p>
          <div className="filters" role="group" aria-label="Show bakes">
            {KINDS.map((k) => (
              <button type="button" key={k} className={k === kind ? 'filter on' : 'filter'}
                aria-pressed={k === kind} onClick={() => setKind(k)}>{k}</button>
            ))}
          </div>
          <div className="grid">
            {shown.map((bake) => (
              <article className="card" key={bake.name}>
                <div className={`pic ${bake.pic}`} />
                <div className="card-body">
                  <h3>{bake.name}</h3>
                  <p>{bake.note}</p>
                  <div className="card-foot">
                    <span className="price">{bake.price}</span>
                    <button type="button" className="add" onClick={add}>Add to basket</button>
                  </div>
                </div>
              </article>
            ))}
          </div>
        </section>
        <section id="hours" className="hours">
          <div>
            <h2>Opening hours</h2>
            <table>
              <tbody>
                {HOURS.map(([day, time]) => (
                  <tr key={day}><td>{day}</td><td>{time}</td></tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="note">
            <strong>Come early on Saturdays</strong>
            The cardamom buns are usually gone by ten. Bring your own bag and we take 20p off.
          </div>
        </section>
        <PreOrder />
      </main>
      <footer id="visit">
        <span>Marigold Lane Bakery · 14 Marigold Lane, Brookfield BR4 2LM</span>
        <span>01632 960 418 · hello@marigoldlane.example</span>
      </footer>
    </>
  )
}
