export default function Toolbar({ query, onQuery }) {
  return (
    <div className="toolbar">
      <label className="search">
        <span>Search books</span>
        <input
          type="search"
          value={query}
          placeholder="Title or author"
          onChange={(event) => onQuery(event.target.value)}
        />
      </label>
    </div>
  )
}
