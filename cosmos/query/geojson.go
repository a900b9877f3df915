package query

import (
	"github.com/golang/geo/s2"
)

// shape is a GeoJSON value (Point, LineString, Polygon or MultiPolygon)
// on the sphere: its points, lines and polygon, whichever it has.
type shape struct {
	kind    string
	points  []s2.Point
	line    *s2.Polyline
	polygon *s2.Polygon
}

// index returns a shape index holding the shape, for distance queries.
func (g *shape) index() *s2.ShapeIndex {
	idx := s2.NewShapeIndex()
	switch {
	case g.polygon != nil:
		idx.Add(g.polygon)
	case g.line != nil:
		idx.Add(g.line)
	default:
		pv := s2.PointVector(g.points)
		idx.Add(&pv)
	}
	return idx
}

// parseGeoJSON reads a GeoJSON geometry object. It returns the shape, or
// the reason it is not a valid one in the words ST_ISVALIDDETAILED uses
// ("" and a nil shape: not a GeoJSON geometry at all).
func parseGeoJSON(v any) (*shape, string) {
	o, ok := v.(*Object)
	if !ok {
		return nil, ""
	}
	t, _ := o.Get("type")
	kind, _ := t.(string)
	coords, _ := o.Get("coordinates")
	switch kind {
	case "Point":
		p, reason := position(coords)
		if reason != "" {
			return nil, reason
		}
		return &shape{kind: kind, points: []s2.Point{p}}, ""
	case "LineString":
		pts, reason := positions(coords, 2)
		if reason != "" {
			return nil, reason
		}
		line := s2.Polyline(pts)
		return &shape{kind: kind, points: pts, line: &line}, ""
	case "Polygon":
		loops, reason := rings(coords)
		if reason != "" {
			return nil, reason
		}
		return polygonShape(kind, loops)
	case "MultiPolygon":
		polys, ok := coords.([]any)
		if !ok {
			return nil, "The MultiPolygon coordinates must be an array of Polygon coordinates."
		}
		var loops []*s2.Loop
		for _, pc := range polys {
			ls, reason := rings(pc)
			if reason != "" {
				return nil, reason
			}
			loops = append(loops, ls...)
		}
		return polygonShape(kind, loops)
	}
	return nil, ""
}

// polygonShape builds a polygon from oriented loops (interior on the left:
// an outer ring counter-clockwise, holes clockwise, as GeoJSON has them; a
// clockwise outer ring is the rest of the globe).
func polygonShape(kind string, loops []*s2.Loop) (*shape, string) {
	for _, l := range loops {
		if err := l.Validate(); err != nil {
			return nil, "The Polygon ring is not valid: " + err.Error() + "."
		}
	}
	p := s2.PolygonFromOrientedLoops(loops)
	if err := p.Validate(); err != nil {
		return nil, "The " + kind + " is not valid: " + err.Error() + "."
	}
	return &shape{kind: kind, polygon: p}, ""
}

// position reads a [longitude, latitude] pair.
func position(v any) (s2.Point, string) {
	c, ok := v.([]any)
	if !ok || len(c) < 2 {
		return s2.Point{}, "A position must be an array of at least two numbers."
	}
	lng, ok1 := c[0].(float64)
	lat, ok2 := c[1].(float64)
	if !ok1 || !ok2 {
		return s2.Point{}, "A position must be an array of at least two numbers."
	}
	if lat < -90 || lat > 90 {
		return s2.Point{}, "Latitude values must be between -90 and 90 degrees."
	}
	if lng < -180 || lng > 180 {
		return s2.Point{}, "Longitude values must be between -180 and 180 degrees."
	}
	return s2.PointFromLatLng(s2.LatLngFromDegrees(lat, lng)), ""
}

// positions reads an array of at least n positions.
func positions(v any, n int) ([]s2.Point, string) {
	arr, ok := v.([]any)
	if !ok || len(arr) < n {
		return nil, "A LineString must have at least two positions."
	}
	pts := make([]s2.Point, len(arr))
	for i, c := range arr {
		p, reason := position(c)
		if reason != "" {
			return nil, reason
		}
		pts[i] = p
	}
	return pts, ""
}

// rings reads a polygon's linear rings: each closed (last position equal
// to the first) with at least four positions.
func rings(v any) ([]*s2.Loop, string) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, "A Polygon must have at least one ring."
	}
	loops := make([]*s2.Loop, 0, len(arr))
	for _, r := range arr {
		pts, reason := positions(r, 4)
		if reason != "" {
			if reason == "A LineString must have at least two positions." {
				reason = "A Polygon ring must have at least four positions."
			}
			return nil, reason
		}
		if pts[0] != pts[len(pts)-1] {
			return nil, "The first and last positions of a Polygon ring must be the same."
		}
		loops = append(loops, s2.LoopFromPoints(pts[:len(pts)-1]))
	}
	return loops, ""
}
