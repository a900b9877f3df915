package core

// Tx is the engine's critical section as a DeadLetterFunc sees it.
type Tx struct {
	e *Engine
}

// Engine is the expiring-entity engine.
type Engine struct{}
