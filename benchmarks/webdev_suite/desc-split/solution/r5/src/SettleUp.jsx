import { euros, settlements } from './money.js'

export default function SettleUp({ expenses }) {
  const payments = settlements(expenses)
  return (
    <section className="card">
      <h2>Who pays whom</h2>
      {payments.length === 0 ? (
        <p className="empty">Everyone is square. Nobody owes anything.</p>
      ) : (
        <ul className="payments">
          {payments.map((p) => (
            <li key={`${p.from}-${p.to}`}>
              <strong>{p.from}</strong> pays <strong>{p.to}</strong> <span className="amount">{euros(p.cents)}</span>
            </li>
          ))}
        </ul>
      )}
      <p className="hint">Shares are equal: each person pays a third of the total.</p>
    </section>
  )
}
