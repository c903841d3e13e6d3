import './App.css'
import { FAQ, PLANS } from './plans.js'

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

function Plan({ plan }) {
  return (
    <article className={plan.featured ? 'plan featured' : 'plan'}>
      <h3>{plan.name}</h3>
      <p className="for">{plan.audience}</p>
      <div className="price">
        <span className="amount">${plan.monthly}</span>
        <span className="per">/month</span>
      </div>
      <ul>
        {plan.features.map((feature) => <li key={feature}>{feature}</li>)}
      </ul>
      <button type="button">Start free trial</button>
    </article>
  )
}

export default function App() {
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
        <section className="plans">
          {PLANS.map((plan) => <Plan key={plan.name} plan={plan} />)}
        </section>
        <section className="faq">
          <h2>Frequently asked questions</h2>
          <div className="faq-grid">
            {FAQ.map(([question, answer]) => (
              <div className="faq-item" key={question}>
                <h3>{question}</h3>
                <p>{answer}</p>
              </div>
            ))}
          </div>
        </section>
      </main>
      <footer>
        <span>© 2025 Tallyhive Ltd</span>
        <span>Timesheets for teams who bill by the hour</span>
      </footer>
    </>
  )
}
