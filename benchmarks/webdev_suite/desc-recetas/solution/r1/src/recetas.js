// Las cuatro recetas del recetario, todas para 4 raciones.
export const RACIONES_BASE = 4

export const RECETAS = [
  {
    id: 'tortilla',
    nombre: 'Tortilla de patatas',
    tiempo: 40,
    dificultad: 'Media',
    ingredientes: [
      { cantidad: 6, texto: 'huevos' },
      { cantidad: 400, texto: 'g de patatas' },
      { cantidad: 2, texto: 'cebollas' },
      { cantidad: 200, texto: 'ml de aceite de oliva' },
    ],
    pasos: [
      'Pela las patatas y la cebolla y córtalas en láminas finas.',
      'Fríelas a fuego suave en el aceite hasta que estén tiernas y escúrrelas.',
      'Bate los huevos con sal, mezcla con las patatas y cuaja la tortilla por ambos lados.',
    ],
  },
  {
    id: 'gazpacho',
    nombre: 'Gazpacho',
    tiempo: 15,
    dificultad: 'Fácil',
    ingredientes: [
      { cantidad: 8, texto: 'tomates maduros' },
      { cantidad: 1, texto: 'pepino' },
      { cantidad: 1, texto: 'pimiento verde' },
      { cantidad: 60, texto: 'ml de aceite de oliva' },
      { cantidad: 20, texto: 'ml de vinagre' },
    ],
    pasos: [
      'Lava y trocea los tomates, el pepino y el pimiento.',
      'Tritura todo con el aceite, el vinagre y una pizca de sal.',
      'Cuélalo y déjalo enfriar en la nevera al menos una hora.',
    ],
  },
  {
    id: 'lentejas',
    nombre: 'Lentejas estofadas',
    tiempo: 60,
    dificultad: 'Media',
    ingredientes: [
      { cantidad: 300, texto: 'g de lentejas' },
      { cantidad: 2, texto: 'zanahorias' },
      { cantidad: 1, texto: 'chorizo' },
      { cantidad: 800, texto: 'ml de caldo' },
    ],
    pasos: [
      'Sofríe la zanahoria picada con un poco de aceite.',
      'Añade las lentejas, el chorizo en rodajas y el caldo.',
      'Cuece a fuego lento unos 45 minutos, removiendo de vez en cuando.',
    ],
  },
  {
    id: 'flan',
    nombre: 'Flan casero',
    tiempo: 90,
    dificultad: 'Difícil',
    ingredientes: [
      { cantidad: 4, texto: 'huevos' },
      { cantidad: 500, texto: 'ml de leche' },
      { cantidad: 120, texto: 'g de azúcar' },
      { cantidad: 10, texto: 'ml de vainilla' },
    ],
    pasos: [
      'Haz un caramelo con la mitad del azúcar y cubre el fondo del molde.',
      'Bate los huevos con la leche, el resto del azúcar y la vainilla.',
      'Vierte la mezcla en el molde y cuécelo al baño maría 50 minutos.',
      'Déjalo enfriar y desmóldalo antes de servir.',
    ],
  },
]
