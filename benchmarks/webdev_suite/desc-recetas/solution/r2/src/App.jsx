import { useState } from 'react'
import { RECETAS } from './recetas.js'
import './App.css'

const normaliza = (texto) => texto.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().trim()

function Tarjeta({ receta }) {
  return (
    <article className="tarjeta">
      <h2>{receta.nombre}</h2>
      <p className="datos">
        <span className="tiempo">⏱ {receta.tiempo} min</span>
        <span className="dificultad">Dificultad: {receta.dificultad}</span>
      </p>
    </article>
  )
}

export default function App() {
  const [busqueda, setBusqueda] = useState('')
  const visibles = RECETAS.filter((r) => normaliza(r.nombre).includes(normaliza(busqueda)))

  return (
    <main className="recetario">
      <h1>Mi recetario</h1>
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
            <Tarjeta key={receta.id} receta={receta} />
          ))}
        </section>
      )}
    </main>
  )
}
