package query

import (
	"github.com/golang/geo/earth"
	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"
)

// The spatial functions take GeoJSON values in WGS-84 longitude and
// latitude and work on the sphere with the s2 geometry library: distances
// in metres and areas in square metres use the Earth's mean radius, so
// they differ from the service's, which measures on the WGS-84 ellipsoid,
// by up to about 0.5%.

// spatialFunctions are the ST_ functions.
var spatialFunctions = map[string]*function{
	"ST_DISTANCE": fn(2, 2, func(_ *env, a []any) any {
		g1, g2, ok := twoShapes(a)
		if !ok {
			return Undefined
		}
		return earth.LengthFromAngle(distance(g1, g2).Angle()).Meters()
	}),
	"ST_INTERSECTS": fn(2, 2, func(_ *env, a []any) any {
		g1, g2, ok := twoShapes(a)
		if !ok {
			return Undefined
		}
		return distance(g1, g2) == 0
	}),
	"ST_WITHIN": fn(2, 2, func(_ *env, a []any) any {
		g1, g2, ok := twoShapes(a)
		if !ok {
			return Undefined
		}
		return within(g1, g2)
	}),
	"ST_AREA": fn(1, 1, func(_ *env, a []any) any {
		g, reason := parseGeoJSON(a[0])
		if g == nil || reason != "" {
			return Undefined
		}
		if g.polygon == nil {
			return 0.0
		}
		return earth.AreaFromSteradians(g.polygon.Area()).SquareMeters()
	}),
	"ST_ISVALID": fn(1, 1, func(_ *env, a []any) any {
		g, reason := parseGeoJSON(a[0])
		if g == nil && reason == "" {
			return Undefined
		}
		return reason == ""
	}),
	"ST_ISVALIDDETAILED": fn(1, 1, func(_ *env, a []any) any {
		g, reason := parseGeoJSON(a[0])
		switch {
		case g == nil && reason == "":
			return Undefined
		case reason != "":
			return &Object{Keys: []string{"valid", "reason"}, Vals: []any{false, reason}}
		}
		return &Object{Keys: []string{"valid"}, Vals: []any{true}}
	}),
}

// twoShapes parses the two GeoJSON arguments; either not being a valid
// geometry makes the function undefined.
func twoShapes(a []any) (*shape, *shape, bool) {
	g1, r1 := parseGeoJSON(a[0])
	g2, r2 := parseGeoJSON(a[1])
	if g1 == nil || g2 == nil || r1 != "" || r2 != "" {
		return nil, nil, false
	}
	return g1, g2, true
}

// distance is the least angle between any point of g1 and any point of g2,
// interiors of polygons included (0 when they touch or overlap).
func distance(g1, g2 *shape) s1.ChordAngle {
	i1, i2 := g1.index(), g2.index()
	opts := s2.NewClosestEdgeQueryOptions().IncludeInteriors(true)
	d := s2.NewClosestEdgeQuery(i1, opts).Distance(s2.NewMinDistanceToShapeIndexTarget(i2))
	if back := s2.NewClosestEdgeQuery(i2, opts).Distance(s2.NewMinDistanceToShapeIndexTarget(i1)); back < d {
		d = back
	}
	return d
}

// within reports whether every point of g1 lies in polygon g2.
func within(g1, g2 *shape) bool {
	if g2.polygon == nil {
		return false
	}
	switch {
	case g1.polygon != nil:
		return g2.polygon.Contains(g1.polygon)
	case g1.line != nil:
		for _, p := range g1.points {
			if !g2.polygon.ContainsPoint(p) {
				return false
			}
		}
		// No edge of the line may leave the polygon between its vertices.
		for i := 0; i+1 < len(g1.points); i++ {
			for _, l := range g2.polygon.Loops() {
				c := s2.NewChainEdgeCrosser(g1.points[i], g1.points[i+1], l.Vertex(0))
				for j := 1; j <= l.NumVertices(); j++ {
					if c.ChainCrossingSign(l.Vertex(j)) == s2.Cross {
						return false
					}
				}
			}
		}
		return true
	}
	for _, p := range g1.points {
		if !g2.polygon.ContainsPoint(p) {
			return false
		}
	}
	return true
}
