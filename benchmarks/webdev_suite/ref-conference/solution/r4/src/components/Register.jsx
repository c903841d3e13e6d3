import { useState } from 'react'
import './Register.css'

export default function Register() {
  const [name, setName] = useState('')
  const [email, setEmail] = useState('')
  const [done, setDone] = useState(null)
  const [error, setError] = useState('')

  const submit = (e) => {
    e.preventDefault()
    const who = name.trim()
    const address = email.trim()
    if (!who || !address) {
      setError('Please fill in your name and email.')
      return
    }
    setDone({ who, address })
  }

  return (
    <section id="register">
      <div className="wrap">
        <h2>Register</h2>
        {done ? (
          <div className="confirmation" role="status">
            <p className="confirmation-title">You are registered, {done.who}!</p>
            <p>We sent your ticket details to {done.address}. See you at Harbor Hall on 12 September.</p>
          </div>
        ) : (
          <form className="register-form" onSubmit={submit} noValidate>
            <p className="register-intro">Seats are limited to 220. Registration is free for students.</p>
            <label>
              Name
              <input type="text" name="name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} required />
            </label>
            <label>
              Email
              <input type="email" name="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
            </label>
            {error && <p className="form-error" role="alert">{error}</p>}
            <button type="submit">Reserve my seat</button>
          </form>
        )}
      </div>
    </section>
  )
}
