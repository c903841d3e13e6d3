import { useState } from 'react'
import './App.css'
import Compare from './Compare.jsx'
import Faq from './Faq.jsx'
import { PLANS } from './plans.js'

function Brand() {
  return (
    <div className="brand">
      <svg width="30" height="30" viewBox="0 0 30 30" aria-hidden="true">
        <path d="M15 2l11.3 6.5v13L15 28 3.7 21.5v-13z" fill="#5b4bdb" />
        <path d="M10 11h10M10 15h10M10 19h6" stroke="#fff" strokeWidth="2.2" strokeLinecap="round" />
      </svg>
      Tallyhive
    </div>
  )
}

function Billing({ billing, onChange }) {
  return (
    <div className="billing">
      <div className="switch" role="group" aria-label="Billing period">
        <button type="button" aria-pressed={billing === 'monthly'} className={billing === 'monthly' ? 'on' : ''}
          onClick={() => onChange('monthly')}>Monthly</button>
        <button type="button" aria-pressed={billing === 'yearly'} className={billing === 'yearly' ? 'on' : ''}
          onClick={() => onChange('yearly')}>Yearly</button>
      </div>
      {billing === 'yearly' && <p className="saving">Billed yearly, save 20%</p>}
    </div>
  )
}

function Plan({ plan, billing }) {
  const yearly = billing === 'yearly'
  return (
    <article className={plan.featured ? 'plan featured' : 'plan'}>
      <h3>{plan.name}</h3>
      <p className="for">{plan.audience}</p>
      <div className="price">
        <span className="amount">${yearly ? plan.yearly : plan.monthly}</span>
        <span className="per">{yearly ? '/month, billed yearly' : '/month'}</span>
      </div>
      <button type="button">Start free trial</button>
    </article>
  )
}

export default function App() {
  const [billing, setBilling] = useState('monthly')
  return (
    <>
      <header className="nav">
        <Brand />
        <ul>
          <li>Product</li>
          <li>Customers</li>
          <li>Pricing</li>
          <li className="login">Log in</li>
        </ul>
      </header>
      <section className="hero">
        <span className="eyebrow">Pricing</span>
        <h1>Simple pricing for busy teams</h1>
        <p>Track time, approve timesheets and send invoices from one place. One price per team member, no setup fees.</p>
      </section>
      <main>
        <Billing billing={billing} onChange={setBilling} />
        <section className="plans">
          {PLANS.map((plan) => <Plan key={plan.name} plan={plan} billing={billing} />)}
        </section>
        <Compare />
        <Faq />
      </main>
      <footer>
        <span>© 2025 Tallyhive Ltd</span>
        <span>Timesheets for teams who bill by the hour</span>
      </footer>
    </>
  )
}
