import { RECETAS } from './recetas.js'
import './App.css'

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
  return (
    <main className="recetario">
      <h1>Mi recetario</h1>
      <p className="intro">Mis recetas de siempre, siempre a mano.</p>
      <section className="rejilla">
        {RECETAS.map((receta) => (
          <Tarjeta key={receta.id} receta={receta} />
        ))}
      </section>
    </main>
  )
}
