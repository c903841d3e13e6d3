import { useState } from 'react'
import { FAQ } from './plans.js'

export default function Faq() {
  const [open, setOpen] = useState(() => new Set())
  const toggle = (question) => setOpen((now) => {
    const next = new Set(now)
    if (next.has(question)) next.delete(question)
    else next.add(question)
    return next
  })

  return (
    <section className="faq">
      <h2>Frequently asked questions</h2>
      <div className="faq-list">
        {FAQ.map(([question, answer], index) => {
          const expanded = open.has(question)
          return (
            <div className={expanded ? 'faq-item open' : 'faq-item'} key={question}>
              <h3>
                <button type="button" aria-expanded={expanded} aria-controls={`faq-${index}`}
                  onClick={() => toggle(question)}>
                  <span>{question}</span>
                  <span className="sign" aria-hidden="true">{expanded ? '−' : '+'}</span>
                </button>
              </h3>
              {expanded && <p id={`faq-${index}`}>{answer}</p>}
            </div>
          )
        })}
      </div>
    </section>
  )
}
