import { useState } from 'react'
import { days } from '../data.js'
import './Schedule.css'

export default function Schedule() {
  const [active, setActive] = useState(days[0].id)
  const day = days.find((d) => d.id === active)
  return (
    <section id="schedule">
      <div className="wrap">
        <h2>Schedule</h2>
        <div className="tabs" role="tablist" aria-label="Conference days">
          {days.map((d) => (
            <button
              key={d.id}
              type="button"
              role="tab"
              aria-selected={d.id === active}
              className={d.id === active ? 'tab active' : 'tab'}
              onClick={() => setActive(d.id)}
            >
              {d.label}
              <span className="tab-date">{d.date}</span>
            </button>
          ))}
        </div>
        <table role="tabpanel">
          <thead><tr><th>Time</th><th>Session</th><th>Speaker</th></tr></thead>
          <tbody>
            {day.sessions.map(([time, title, who]) => (
              <tr key={day.id + time}><td className="time">{time}</td><td>{title}</td><td>{who}</td></tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}
