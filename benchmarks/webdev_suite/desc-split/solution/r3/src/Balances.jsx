import { balances, euros, signed } from './money.js'

export default function Balances({ expenses }) {
  const rows = balances(expenses)
  return (
    <section className="card">
      <h2>Balances</h2>
      <table className="table balances">
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">Paid</th>
            <th scope="col">Share</th>
            <th scope="col">Balance</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.person}>
              <th scope="row">{row.person}</th>
              <td>{euros(row.paid)}</td>
              <td>{euros(Math.round(row.share))}</td>
              <td className={row.balance < -0.5 ? 'negative' : row.balance > 0.5 ? 'positive' : ''}>
                {signed(row.balance)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="hint">A positive balance means the others owe that person money.</p>
    </section>
  )
}
