import { useEffect, useState } from 'react'
import { speakers } from '../data.js'
import './Speakers.css'

function SpeakerPanel({ speaker, onClose }) {
  useEffect(() => {
    const onKey = (e) => { if (e.key === 'Escape') onClose() }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [onClose])
  return (
    <div className="panel-backdrop" onClick={onClose}>
      <div className="panel" role="dialog" aria-modal="true" aria-labelledby="panel-title" onClick={(e) => e.stopPropagation()}>
        <h2 id="panel-title">About the speaker</h2>
        <div className="panel-person">
          <div className={`avatar small ${speaker.tone}`}>{speaker.initials}</div>
          <div>
            <h3>{speaker.name}</h3>
            <p className="role">{speaker.role}</p>
          </div>
        </div>
        <p className="panel-talk">Talk: {speaker.talk}</p>
        <p>{speaker.bio}</p>
        <button type="button" className="close" onClick={onClose}>Close</button>
      </div>
    </div>
  )
}

export default function Speakers() {
  const [openId, setOpenId] = useState(null)
  const open = speakers.find((s) => s.id === openId)
  return (
    <section id="speakers">
      <div className="wrap">
        <h2>Speakers</h2>
        <div className="speakers">
          {speakers.map((s) => (
            <article className="card" key={s.id}>
              <div className={`avatar ${s.tone}`}>{s.initials}</div>
              <h3>{s.name}</h3>
              <p className="role">{s.role}</p>
              <p className="talk">{s.talk}</p>
              <button type="button" className="bio-button" onClick={() => setOpenId(s.id)}>Read bio</button>
            </article>
          ))}
        </div>
      </div>
      {open && <SpeakerPanel speaker={open} onClose={() => setOpenId(null)} />}
    </section>
  )
}
