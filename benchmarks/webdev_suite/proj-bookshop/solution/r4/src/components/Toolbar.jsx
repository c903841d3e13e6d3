export default function Toolbar({ query, onQuery, genres, genre, onGenre }) {
  const options = [['', 'All genres'], ...genres.map((g) => [g, g])]
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
      <div className="genres" role="group" aria-label="Genre">
        {options.map(([value, label]) => (
          <button
            key={label}
            type="button"
            className={value === genre ? 'genre-button active' : 'genre-button'}
            aria-pressed={value === genre}
            onClick={() => onGenre(value)}
          >
            {label}
          </button>
        ))}
      </div>
    </div>
  )
}
