import { useState } from 'react'

const EMAIL = /^[^\s@]+@[^\s@]+$/

export default function PreOrder() {
  const [form, setForm] = useState({ name: '', email: '', wish: '' })
  const [status, setStatus] = useState(null) // null | 'error' | 'sent'
  const set = (field) => (event) => setForm({ ...form, [field]: event.target.value })

  function submit(event) {
    event.preventDefault()
    setStatus(EMAIL.test(form.email.trim()) ? 'sent' : 'error')
  }

  return (
    <section id="preorder" className="preorder">
      <h2>Pre-order</h2>
      <p className="lead">Tell us what you would like and when, and we will set it aside for you.</p>
      <form onSubmit={submit} noValidate>
        <label>
          Your name
          <input type="text" name="name" autoComplete="name" value={form.name} onChange={set('name')} />
        </label>
        <label>
          Email
          <input type="email" name="email" autoComplete="email" placeholder="you@example.com"
            value={form.email} onChange={set('email')} aria-invalid={status === 'error'} />
        </label>
        <label className="wide">
          What would you like?
          <textarea name="wish" rows="3" placeholder="Two sourdough loaves for Saturday morning"
            value={form.wish} onChange={set('wish')} />
        </label>
        <div className="wide form-foot">
          <button type="submit" className="add">Send pre-order</button>
          {status === 'error' && <p className="msg error" role="alert">Please enter a valid email</p>}
          {status === 'sent' && <p className="msg ok" role="status">Thanks, we will have it ready for you.</p>}
        </div>
      </form>
    </section>
  )
}
