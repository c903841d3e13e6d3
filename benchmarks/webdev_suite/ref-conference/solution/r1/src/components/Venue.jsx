export default function Venue() {
  return (
    <section id="venue">
      <div className="wrap">
        <h2>Venue</h2>
        <div className="venue">
          <div>
            <h3>Harbor Hall</h3>
            <p>14 Quay Street, Pinecrest</p>
            <p>A converted boat shed on the waterfront, five minutes on foot from Pinecrest station. The main hall seats 220; the workshop room upstairs seats 40.</p>
            <p>Step-free access on both floors. Bike racks by the north entrance.</p>
          </div>
          <div className="map">
            <svg className="pin" width="24" height="34" viewBox="0 0 24 34" aria-hidden="true">
              <path d="M12 0 C5 0 0 5 0 12 C0 21 12 34 12 34 C12 34 24 21 24 12 C24 5 19 0 12 0 Z" fill="#d64545" />
              <circle cx="12" cy="12" r="5" fill="#fff" />
            </svg>
          </div>
        </div>
      </div>
    </section>
  )
}
