import { PLANS } from './plans.js'

const YES = 'yes'
const NO = 'no'

const ROWS = [
  ['Projects', ['3', 'Unlimited', 'Unlimited']],
  ['Team members', ['Up to 5', 'Up to 25', 'Unlimited']],
  ['Weekly reports', [YES, YES, YES]],
  ['Timesheet exports', [NO, YES, YES]],
  ['Single sign-on', [NO, NO, YES]],
  ['Audit log', [NO, NO, YES]],
  ['Support', ['Email', 'Priority', 'Priority']],
]

function Cell({ value }) {
  if (value === YES) return <td className="yes"><span aria-label="Included">✓</span></td>
  if (value === NO) return <td className="no"><span aria-label="Not included">—</span></td>
  return <td>{value}</td>
}

export default function Compare() {
  return (
    <section className="compare">
      <h2>Compare plans</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Feature</th>
            {PLANS.map((plan) => <th scope="col" key={plan.name} className={plan.featured ? 'featured' : ''}>{plan.name}</th>)}
          </tr>
        </thead>
        <tbody>
          {ROWS.map(([feature, values]) => (
            <tr key={feature}>
              <th scope="row">{feature}</th>
              {values.map((value, i) => <Cell key={PLANS[i].name} value={value} />)}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}
