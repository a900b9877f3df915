package query

import (
	"strconv"
	"strings"
)

// function is a built-in scalar function.
type function struct {
	minArgs, maxArgs int // maxArgs < 0: any number
	// undefinedOK says the function is called even when an argument is
	// undefined; otherwise such a call is undefined without calling it, as
	// the service does.
	undefinedOK bool
	call        func(e *env, args []any) any
}

// arity describes the accepted argument counts, for messages.
func (f *function) arity() string {
	switch {
	case f.maxArgs < 0:
		return strconv.Itoa(f.minArgs) + " or more"
	case f.minArgs == f.maxArgs:
		return strconv.Itoa(f.minArgs)
	}
	return strconv.Itoa(f.minArgs) + " to " + strconv.Itoa(f.maxArgs)
}

// fn builds a table entry.
func fn(minArgs, maxArgs int, call func(e *env, args []any) any) *function {
	return &function{minArgs: minArgs, maxArgs: maxArgs, call: call}
}

// fnU builds a table entry that is called with undefined arguments too.
func fnU(minArgs, maxArgs int, call func(e *env, args []any) any) *function {
	return &function{minArgs: minArgs, maxArgs: maxArgs, undefinedOK: true, call: call}
}

// lookupFunction finds a built-in function by name, in any case.
func lookupFunction(name string) *function {
	return builtins[strings.ToUpper(name)]
}

// builtins is the read-only table of built-in scalar functions by
// upper-case name. The aggregates (COUNT, SUM, AVG, MIN, MAX) are not
// here: the binder handles them.
var builtins = mergeTables(typeFunctions, stringFunctions, arrayFunctions, arraySetFunctions, mathFunctions,
	dateFunctions, dateTimeFunctions, itemFunctions, spatialFunctions, vectorFunctions, regexFunctions)

// mergeTables joins the per-group tables into one.
func mergeTables(tables ...map[string]*function) map[string]*function {
	all := map[string]*function{}
	for _, t := range tables {
		for k, v := range t {
			all[k] = v
		}
	}
	return all
}

// Argument helpers: each returns the argument converted and whether it had
// the type; a function returns Undefined when one does not.

// argStr returns args[i] as a string.
func argStr(args []any, i int) (string, bool) {
	s, ok := args[i].(string)
	return s, ok
}

// argNum returns args[i] as a number.
func argNum(args []any, i int) (float64, bool) {
	n, ok := args[i].(float64)
	return n, ok
}

// optBool returns the optional boolean args[i], false when absent; ok is
// false when present and not a boolean.
func optBool(args []any, i int) (v, ok bool) {
	if i >= len(args) {
		return false, true
	}
	b, ok := args[i].(bool)
	return b, ok
}
