package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/events/schema"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestSchemaFilesAreGenerated: events/schema/<event_type>.json and docs/contract.md's field table
// are what the structs of event.go say (their comments, types and schema tags) and what Decode
// and Validate accept (required, null, ranges, byte bounds). UPDATE_GOLDENS=1 writes them (the
// table between its marker lines, the rest of the page staying as written); without it a
// committed file that differs fails here, so a new field is one field in event.go (and its check
// in Validate).
func TestSchemaFilesAreGenerated(t *testing.T) {
	docs := parseDocs(t, "event.go")
	gens := map[Type]schemaGen{}
	for _, typ := range []Type{ListingOpened, ListingChanged, ListingClosed} {
		g := schemaGen{t: t, typ: typ, docs: docs}
		gens[typ] = g
		testkit.Golden(t, "schema/"+string(typ)+".json", g.document())
	}
	testkit.GoldenSection(t, contractPage, contractTableBegin, contractTableEnd, contractTable(gens))
}

// The patterns of the texts Decode parses: uuid.UUID's forms, time.Time's RFC 3339 as its parser
// reads it, and DateLayout and TimeLayout (schema tag pattern=date, pattern=time).
var (
	uuidPattern = func() string {
		h := "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
		return "^(" + h + `|\{` + h + `\}|[uU][rR][nN]:[uU][uU][iI][dD]:` + h + "|[0-9a-fA-F]{32})$"
	}()
	instantPattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{1,2}:[0-9]{2}:[0-9]{2}([.,][0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$`
	namedPatterns  = map[string]string{
		"date": "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$",
		"time": "^([01][0-9]|2[0-3]):[0-5][0-9]$",
	}
)

// stricterRulesText is the part of every schema's description that lists what Decode checks
// beyond the schema (TestSchemaStricterRules holds it to stricterRules); %s is the int64 fields.
const stricterRulesText = "Decode, the consumer's reader, is stricter than this schema in these rules only: " +
	"(1) listing_key is the escaped join of source, course_name, course_part, play_date and tee_time (see the listing_key description); a key that does not match them is rejected. " +
	"(2) Lengths are bounded in UTF-8 bytes, not characters: maxLength here is the byte bound, so a value within it in characters can still be too long. " +
	"(3) play_date is a real calendar date (2026-02-30 is rejected) and occurred_at a real instant (month, day, hour, minute and second in range) that is not 0001-01-01T00:00:00Z. " +
	"(4) event_id is not the nil UUID (00000000-0000-0000-0000-000000000000). " +
	"(5) Integers are whole JSON numbers without fraction or exponent (1.0 and 1e0 are rejected), %s within a signed 64-bit integer. " +
	"(6) The whole event is at most 65536 bytes of valid UTF-8, one JSON object and nothing after it."

// goDocs are the doc comments of event.go: of each struct field ("Event.PriceKRW") and each
// constant, as one line.
type goDocs map[string]string

func parseDocs(t *testing.T, file string) goDocs {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	docs := goDocs{}
	oneLine := func(g *ast.CommentGroup) string { return strings.Join(strings.Fields(g.Text()), " ") }
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.TypeSpec:
			if st, ok := n.Type.(*ast.StructType); ok {
				for _, fld := range st.Fields.List {
					for _, name := range fld.Names {
						if fld.Doc != nil {
							docs[n.Name.Name+"."+name.Name] = oneLine(fld.Doc)
						}
					}
				}
			}
		case *ast.ValueSpec:
			for _, name := range n.Names {
				if n.Doc != nil {
					docs[name.Name] = oneLine(n.Doc)
				}
			}
		}
		return true
	})
	return docs
}

// schemaGen writes the schema of one event type.
type schemaGen struct {
	t    *testing.T
	typ  Type
	docs goDocs
}

func (g schemaGen) document() []byte {
	var props object
	var required, optional, zeros, int64s, only, omitted []string
	for _, f := range wireFields(reflect.TypeFor[Event]()) {
		name := jsonName(f)
		tag := schemaTag(g.t, f)
		if tag["only"] != "" {
			only = append(only, name)
		} else if strings.HasSuffix(f.Tag.Get("json"), ",omitempty") {
			omitted = append(omitted, name)
		}
		props = append(props, member{name, g.property(f, name, tag)})
		switch {
		case g.requires(name):
			required = append(required, name)
		case tag["only"] == "":
			optional = append(optional, name)
			zeros = append(zeros, zeroJSON(f.Type))
		}
		if elem(f.Type).Kind() == reflect.Int64 {
			int64s = append(int64s, name)
		}
	}
	for _, f := range wireFields(reflect.TypeFor[Previous]()) {
		if elem(f.Type).Kind() == reflect.Int64 {
			int64s = append(int64s, "previous."+jsonName(f))
		}
	}
	except := and(only) + " where this type has none"
	if len(omitted) > 0 {
		except += ", and " + and(omitted) + " when unknown"
	}
	desc := fmt.Sprintf("%s Schema version %d of the booking-events contract (docs/contract.md; docs/consuming-events.md). "+
		"The crawler writes every field below except %s; another producer may omit %s (read as %s). "+stricterRulesText,
		g.doc(string(typeConst(g.typ))), SchemaVersion, except, and(optional), and(zeros), and(int64s))
	doc := object{
		{"$schema", "https://json-schema.org/draft/2020-12/schema"},
		{"$id", schema.BaseURL + string(g.typ) + ".json"},
		{"title", string(g.typ)},
		{"description", desc},
		{"type", "object"},
		{"properties", props},
		{"required", required},
		{"additionalProperties", false},
	}
	var b bytes.Buffer
	writeJSON(&b, doc, "")
	b.WriteString("\n")
	return b.Bytes()
}

// typeConst is the name of typ's constant in event.go, whose comment opens the description.
func typeConst(typ Type) string {
	return map[Type]string{ListingOpened: "ListingOpened", ListingChanged: "ListingChanged", ListingClosed: "ListingClosed"}[typ]
}

func (g schemaGen) doc(key string) string {
	d, ok := g.docs[key]
	if !ok || d == "" {
		g.t.Fatalf("%s has no doc comment in event.go: it is its description in the JSON Schemas", key)
	}
	return d
}

// property is the schema of Event field f in g's type.
func (g schemaGen) property(f reflect.StructField, name string, tag map[string]string) object {
	owner := "Event" // the struct that declares f: Event, or one it embeds (Values, Attributes)
	if len(f.Index) > 1 {
		owner = reflect.TypeFor[Event]().Field(f.Index[0]).Type.Name()
	}
	desc := g.doc(owner + "." + f.Name)
	if owner == "Values" && g.typ != ListingOpened {
		qual := map[Type]string{ListingChanged: ", the new value", ListingClosed: ", the last seen"}[g.typ]
		if head, tail, ok := strings.Cut(desc, ";"); ok {
			desc = head + qual + ";" + tail
		} else {
			desc = strings.TrimSuffix(desc, ".") + qual + "."
		}
	}
	if o := tag["only"]; o != "" && Type(o) != g.typ {
		return g.absent(f, name, o)
	}
	p := object{{"description", desc}}
	switch {
	case f.Type == reflect.TypeFor[Type]():
		return append(p, member{"const", string(g.typ)})
	case f.Name == "SchemaVersion":
		return append(p, member{"const", SchemaVersion})
	}
	nullable := f.Type.Kind() == reflect.Pointer || g.accepts(name, nil)
	if e, ok := tag["enum"]; ok {
		return append(p, member{"enum", g.enum(f, name, strings.Split(e, "|"), nullable)})
	}
	p = append(p, member{"type", jsonType(f.Type, nullable)})
	if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
		var inner object
		for _, v := range wireFields(f.Type.Elem()) {
			vd := v.Tag.Get("previous")
			if vd == "" {
				g.t.Fatalf("Values.%s has no previous tag: its description inside previous", v.Name)
			}
			in := object{{"description", vd}, {"type", jsonType(v.Type, v.Type.Kind() == reflect.Pointer)}}
			inner = append(inner, member{jsonName(v), g.intRange(v, "previous."+jsonName(v), in)})
		}
		return append(p, member{"properties", inner}, member{"additionalProperties", false})
	}
	switch elem(f.Type) {
	case reflect.TypeFor[uuid.UUID]():
		return append(p, member{"pattern", uuidPattern})
	case reflect.TypeFor[time.Time]():
		return append(p, member{"pattern", instantPattern})
	}
	if pat, ok := tag["pattern"]; ok {
		if namedPatterns[pat] == "" {
			g.t.Fatalf("%s: schema tag pattern=%s: no such pattern (date, time)", name, pat)
		}
		return append(p, member{"pattern", namedPatterns[pat]})
	}
	if elem(f.Type).Kind() == reflect.String {
		if !g.accepts(name, "") {
			p = append(p, member{"minLength", 1})
		}
		if n, ok := g.maxBytes(name); ok {
			p = append(p, member{"maxLength", n})
		}
		return p
	}
	return g.intRange(f, name, p)
}

// absent is the property of a field only type owner has, in another type: its zero value, and
// null if Decode reads that.
func (g schemaGen) absent(f reflect.StructField, name, owner string) object {
	p := object{}
	if f.Type.Kind() == reflect.Pointer {
		return append(p, member{"description", "Only " + owner + " has one; the crawler omits it, Decode also reads null."},
			member{"type", "null"})
	}
	zero := reflect.Zero(f.Type).Interface()
	vals, reads := []any{zero}, []string{zeroJSON(f.Type)}
	if g.accepts(name, nil) {
		vals, reads = append(vals, nil), append(reads, "null")
	}
	return append(p, member{"description", "Only " + owner + " has one; the crawler omits it, Decode also reads " + and(reads) + "."},
		member{"enum", vals})
}

// enum is the enum of field f (its tag's values as the field's JSON type), checked against
// Decode: each value accepted, and (for an integer) every other in a window around them rejected.
func (g schemaGen) enum(f reflect.StructField, name string, vals []string, nullable bool) []any {
	var out []any
	for _, v := range vals {
		var x any = v
		if k := elem(f.Type).Kind(); k == reflect.Int || k == reflect.Int64 {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				g.t.Fatalf("%s: schema tag enum value %q is not an integer", name, v)
			}
			x = n
		}
		if !g.accepts(name, x) {
			g.t.Errorf("%s: schema tag enum has %v, which Decode rejects", name, x)
		}
		out = append(out, x)
	}
	if n, ok := out[0].(int64); ok {
		for v := n - 1000; v <= n+1000; v++ {
			if !slices.Contains(out, any(v)) && g.accepts(name, v) {
				g.t.Errorf("%s: Decode accepts %d, which is not in its schema tag's enum %v: check it in Validate", name, v, out)
				break
			}
		}
	} else if g.accepts(name, "not-"+vals[0]) {
		g.t.Errorf("%s: Decode accepts a value outside its schema tag's enum %v: check it in Validate", name, vals)
	}
	if nullable {
		out = append(out, nil)
	}
	return out
}

// intRange appends the minimum and maximum Validate accepts for integer field f at path (a
// top-level name or previous.<name>), found by bisection from a value it accepts, to p. The range
// must be whole: a field with gaps says enum= in its schema tag.
func (g schemaGen) intRange(f reflect.StructField, path string, p object) object {
	if k := elem(f.Type).Kind(); k != reflect.Int && k != reflect.Int64 {
		g.t.Fatalf("%s: no schema for Go type %s", path, f.Type)
	}
	ok := func(v int64) bool { return g.validates(path, v) }
	var seed int64
	for !ok(seed) {
		if seed++; seed > 1000 {
			g.t.Fatalf("%s: Validate accepts no value in 0..1000", path)
		}
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !ok(lo) {
		lo = edge(seed, lo, ok)
	}
	if !ok(hi) {
		hi = edge(seed, hi, ok)
	}
	for v := max(lo, -1000); v <= min(hi, 1000); v++ {
		if !ok(v) {
			g.t.Fatalf("%s: Validate accepts %d..%d but not %d: give the field enum= in its schema tag", path, lo, hi, v)
		}
	}
	return append(p, member{"minimum", lo}, member{"maximum", hi})
}

// sample is a valid event of g's type, as Decode's input (a JSON object).
func (g schemaGen) sample() map[string]any { return typeSample(g.t, g.typ) }

// decodes reports whether Decode accepts m (its listing_key re-derived unless the change is to it).
func (g schemaGen) decodes(m map[string]any, field string) bool {
	if field != "listing_key" {
		rekey(m)
	}
	_, err := Decode(marshal(g.t, m))
	return err == nil
}

func (g schemaGen) requires(field string) bool {
	m := g.sample()
	delete(m, field)
	return !g.decodes(m, field)
}

func (g schemaGen) accepts(field string, v any) bool {
	m := g.sample()
	m[field] = v
	return g.decodes(m, field)
}

// validates reports whether Validate accepts g's sample with the integer at path set to v.
func (g schemaGen) validates(path string, v int64) bool {
	e := g.sampleEvent()
	ev := reflect.ValueOf(&e).Elem()
	name, inner, nested := strings.Cut(path, ".")
	if nested {
		if e.Previous == nil {
			e.Previous = &Previous{}
		}
		ev, name = reflect.ValueOf(e.Previous).Elem(), inner
	}
	fv := fieldByJSON(g.t, ev, name)
	p := reflect.New(elem(fv.Type()))
	p.Elem().SetInt(v)
	if fv.Kind() == reflect.Pointer {
		fv.Set(p)
	} else {
		fv.Set(p.Elem())
	}
	return e.Validate() == nil
}

// maxBytes is the byte bound Validate holds text field name to, if any (the longest value that
// is not ErrFieldTooLong).
func (g schemaGen) maxBytes(name string) (int, bool) {
	tooLong := func(n int) bool {
		e := g.sampleEvent()
		fieldByJSON(g.t, reflect.ValueOf(&e).Elem(), name).SetString(strings.Repeat("x", n))
		return errors.Is(e.Validate(), ErrFieldTooLong)
	}
	const far = MaxEventBytes
	if !tooLong(far) {
		return 0, false
	}
	return int(edge(0, far, func(n int64) bool { return !tooLong(int(n)) })), true
}

// edge is the last value from in (which ok accepts) toward out (which it rejects) that ok
// accepts, by bisection; the midpoint is taken without overflow over the whole int64 range.
func edge(in, out int64, ok func(int64) bool) int64 {
	for {
		m := in/2 + out/2 + (in%2+out%2)/2
		if m == in || m == out {
			return in
		}
		if ok(m) {
			in = m
		} else {
			out = m
		}
	}
}

func (g schemaGen) sampleEvent() Event {
	for _, e := range sampleEvents() {
		if e.EventType == g.typ {
			return e
		}
	}
	g.t.Fatalf("no sample of %s", g.typ)
	return Event{}
}

func fieldByJSON(t *testing.T, v reflect.Value, name string) reflect.Value {
	t.Helper()
	for _, f := range wireFields(v.Type()) {
		if jsonName(f) == name {
			return v.FieldByIndex(f.Index)
		}
	}
	t.Fatalf("no field %s in %s", name, v.Type())
	return reflect.Value{}
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// schemaTag is f's schema tag: comma-separated key=value pairs.
func schemaTag(t *testing.T, f reflect.StructField) map[string]string {
	out := map[string]string{}
	tag := f.Tag.Get("schema")
	if tag == "" {
		return out
	}
	for _, kv := range strings.Split(tag, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !slices.Contains([]string{"pattern", "enum", "only"}, k) {
			t.Fatalf("%s: schema tag %q: want pattern=, enum= or only=", f.Name, tag)
		}
		out[k] = v
	}
	return out
}

func elem(rt reflect.Type) reflect.Type {
	if rt.Kind() == reflect.Pointer {
		return rt.Elem()
	}
	return rt
}

// jsonType is the schema's type of Go type rt: one name, or a list with null.
func jsonType(rt reflect.Type, nullable bool) any {
	var name string
	switch e := elem(rt); {
	case e.Kind() == reflect.String, e == reflect.TypeFor[uuid.UUID](), e == reflect.TypeFor[time.Time]():
		name = "string"
	case e.Kind() == reflect.Int, e.Kind() == reflect.Int64:
		name = "integer"
	case e.Kind() == reflect.Struct:
		name = "object"
	default:
		panic("no JSON Schema type for " + rt.String())
	}
	if nullable && name != "object" {
		return []any{name, "null"}
	}
	return name
}

// zeroJSON is how a reader of an absent field of Go type rt reads it, as JSON.
func zeroJSON(rt reflect.Type) string {
	if rt.Kind() == reflect.Pointer {
		return "null"
	}
	b, _ := json.Marshal(reflect.Zero(rt).Interface())
	return string(b)
}

// and joins words as a list in a sentence: "a", "a and b", "a, b and c".
func and(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// object is a JSON object whose members keep their order.
type object []member

type member struct {
	key string
	val any
}

// writeJSON writes v indented by two spaces per level, as the schema files are laid out, with
// no HTML escaping ("<source>" stays as it is).
func writeJSON(b *bytes.Buffer, v any, indent string) {
	in := indent + "  "
	switch v := v.(type) {
	case object:
		b.WriteString("{\n")
		for i, m := range v {
			b.WriteString(in)
			writeJSON(b, m.key, in)
			b.WriteString(": ")
			writeJSON(b, m.val, in)
			if i < len(v)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "}")
	case []string:
		writeJSON(b, anys(v), indent)
	case []any:
		b.WriteString("[\n")
		for i, x := range v {
			b.WriteString(in)
			writeJSON(b, x, in)
			if i < len(v)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "]")
	default:
		var s bytes.Buffer
		enc := json.NewEncoder(&s)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			panic(err)
		}
		b.Write(bytes.TrimSuffix(s.Bytes(), []byte("\n")))
	}
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// edge finds a bound anywhere in int64, from either side: the lower bound's search from
// math.MinInt64 once overflowed and returned its starting point.
func TestEdge(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, out, lo, hi, want int64 }{
		{0, math.MinInt64, -5, math.MaxInt64, -5},
		{0, math.MaxInt64, math.MinInt64, 100, 100},
		{7, math.MinInt64, math.MinInt64 + 1, math.MaxInt64, math.MinInt64 + 1},
		{7, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MaxInt64 - 1},
		{0, 1, 0, 0, 0},
	} {
		if got := edge(c.in, c.out, func(v int64) bool { return v >= c.lo && v <= c.hi }); got != c.want {
			t.Errorf("edge(%d, %d) over %d..%d = %d, want %d", c.in, c.out, c.lo, c.hi, got, c.want)
		}
	}
}
