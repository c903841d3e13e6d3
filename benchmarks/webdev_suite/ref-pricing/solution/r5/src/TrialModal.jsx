import { useEffect, useRef, useState } from 'react'

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export default function TrialModal({ plan, onClose }) {
  const [email, setEmail] = useState('')
  const [state, setState] = useState('asking') // asking | invalid | sent
  const input = useRef(null)

  useEffect(() => {
    input.current?.focus()
    const onKey = (event) => { if (event.key === 'Escape') onClose() }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [onClose])

  function submit(event) {
    event.preventDefault()
    setState(EMAIL.test(email.trim()) ? 'sent' : 'invalid')
  }

  return (
    <div className="overlay" onClick={(event) => { if (event.target === event.currentTarget) onClose() }}>
      <div className="modal" role="dialog" aria-modal="true" aria-labelledby="trial-title">
        <h2 id="trial-title">Start your free trial</h2>
        <p className="modal-plan">{plan} plan · 14 days free, no card needed</p>
        {state === 'sent' ? (
          <div className="sent" role="status">
            <strong>Check your inbox</strong>
            <p>We sent a sign-up link to {email.trim()}.</p>
          </div>
        ) : (
          <form onSubmit={submit} noValidate>
            <label htmlFor="trial-email">Work email</label>
            <input id="trial-email" ref={input} type="email" name="email" placeholder="you@company.com"
              value={email} onChange={(event) => setEmail(event.target.value)} aria-invalid={state === 'invalid'} />
            {state === 'invalid' && <p className="invalid" role="alert">Please enter a valid email address.</p>}
            <button type="submit" className="primary">Send me a link</button>
          </form>
        )}
        <button type="button" className="close" onClick={onClose}>Close</button>
      </div>
    </div>
  )
}
