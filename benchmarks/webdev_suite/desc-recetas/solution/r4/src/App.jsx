import { useState } from 'react'
import { RECETAS } from './recetas.js'
import './App.css'

const normaliza = (texto) => texto.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().trim()

function Tarjeta({ receta, favorita, onVer, onFavorita }) {
  return (
    <article className="tarjeta">
      <h2>{receta.nombre}</h2>
      <p className="datos">
        <span className="tiempo">⏱ {receta.tiempo} min</span>
        <span className="dificultad">Dificultad: {receta.dificultad}</span>
      </p>
      <div className="acciones">
        <button type="button" className="boton" onClick={() => onVer(receta.id)}>
          Ver receta
        </button>
        <button
          type="button"
          className={favorita ? 'boton boton-favorita activa' : 'boton boton-favorita'}
          aria-pressed={favorita}
          onClick={() => onFavorita(receta.id)}
        >
          {favorita ? '★ Quitar de favoritas' : '☆ Añadir a favoritas'}
        </button>
      </div>
    </article>
  )
}

function Detalle({ receta, onVolver }) {
  return (
    <article className="detalle">
      <button type="button" className="boton boton-secundario" onClick={onVolver}>
        ← Volver
      </button>
      <h2>{receta.nombre}</h2>
      <p className="datos">
        <span className="tiempo">⏱ {receta.tiempo} min</span>
        <span className="dificultad">Dificultad: {receta.dificultad}</span>
      </p>
      <div className="columnas">
        <section>
          <h3>Ingredientes</h3>
          <ul className="ingredientes">
            {receta.ingredientes.map((ing) => (
              <li key={ing.texto}>
                {ing.cantidad} {ing.texto}
              </li>
            ))}
          </ul>
        </section>
        <section>
          <h3>Preparación</h3>
          <ol className="pasos">
            {receta.pasos.map((paso) => (
              <li key={paso}>{paso}</li>
            ))}
          </ol>
        </section>
      </div>
    </article>
  )
}

export default function App() {
  const [busqueda, setBusqueda] = useState('')
  const [abierta, setAbierta] = useState(null)
  const [favoritas, setFavoritas] = useState(() => new Set())
  const visibles = RECETAS.filter((r) => normaliza(r.nombre).includes(normaliza(busqueda)))
  const receta = RECETAS.find((r) => r.id === abierta)

  const alternaFavorita = (id) =>
    setFavoritas((antes) => {
      const despues = new Set(antes)
      if (despues.has(id)) despues.delete(id)
      else despues.add(id)
      return despues
    })

  return (
    <>
      <header className="cabecera">
        <h1>Mi recetario</h1>
        <p className="contador" aria-live="polite">
          <span aria-hidden="true">★</span> Favoritas: {favoritas.size}
        </p>
      </header>
      <main className="recetario">
        {receta ? (
          <Detalle receta={receta} onVolver={() => setAbierta(null)} />
        ) : (
          <>
            <p className="intro">Mis recetas de siempre, siempre a mano.</p>
            <label className="buscador">
              <span>Buscar receta</span>
              <input
                type="search"
                value={busqueda}
                onChange={(e) => setBusqueda(e.target.value)}
                placeholder="Escribe un nombre…"
              />
            </label>
            {visibles.length === 0 ? (
              <p className="vacio">No hay recetas que coincidan con «{busqueda}».</p>
            ) : (
              <section className="rejilla">
                {visibles.map((receta) => (
                  <Tarjeta
                    key={receta.id}
                    receta={receta}
                    favorita={favoritas.has(receta.id)}
                    onVer={setAbierta}
                    onFavorita={alternaFavorita}
                  />
                ))}
              </section>
            )}
          </>
        )}
      </main>
    </>
  )
}
