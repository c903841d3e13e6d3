import { days } from '../data.js'

export default function Schedule() {
  return (
    <section id="schedule">
      <div className="wrap">
        <h2>Schedule</h2>
        <table>
          <thead><tr><th>Time</th><th>Session</th><th>Speaker</th></tr></thead>
          <tbody>
            {days.map((day) => [
              <tr className="day" key={day.id}><th colSpan={3}>{day.label} · {day.date}</th></tr>,
              ...day.sessions.map(([time, title, who]) => (
                <tr key={day.id + time}><td className="time">{time}</td><td>{title}</td><td>{who}</td></tr>
              )),
            ])}
          </tbody>
        </table>
      </div>
    </section>
  )
}
