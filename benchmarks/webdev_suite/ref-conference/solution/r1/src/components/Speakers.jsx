import { speakers } from '../data.js'

export default function Speakers() {
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
            </article>
          ))}
        </div>
      </div>
    </section>
  )
}
