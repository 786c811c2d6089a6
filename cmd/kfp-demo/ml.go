package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
)

// seed fixes the dataset: every run of the demo, on any machine and Go
// version, trains on the same rows, so its accuracy is reproducible.
const seed = 0x6b66702d64656d6f

// The hidden rule: label 1 when w·x + b + noise > 0, with noise uniform in
// ±labelNoise. Noise makes a few labels disagree with the rule, so the
// model cannot be perfect (about 94% is the best possible accuracy).
var (
	ruleWeights = [2]float64{2, -1}
	ruleBias    = 0.3
)

const labelNoise = 0.5

var header = []string{"x1", "x2", "label"}

// splitMix is the SplitMix64 generator. It is written out here, not taken
// from math/rand, whose derived methods (Float64 and the like) carry no
// promise of producing the same numbers in every Go release.
type splitMix uint64

func (s *splitMix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// uniform is in [lo, hi), from the top 53 bits.
func (s *splitMix) uniform(lo, hi float64) float64 {
	return lo + (hi-lo)*float64(s.next()>>11)/(1<<53)
}

type example struct {
	x     [2]float64
	label float64 // 0 or 1
}

// generate makes n examples with features uniform in [-1, 1), rounded to
// the four decimals the CSV holds, so training reads exactly what was
// generated.
func generate(n int) []example {
	rng := splitMix(seed)
	data := make([]example, n)
	for i := range data {
		var e example
		for j := range e.x {
			e.x[j] = math.Round(rng.uniform(-1, 1)*1e4) / 1e4
			if e.x[j] == 0 {
				e.x[j] = 0 // no "-0.0000" in the file
			}
		}
		if ruleWeights[0]*e.x[0]+ruleWeights[1]*e.x[1]+ruleBias+rng.uniform(-labelNoise, labelNoise) > 0 {
			e.label = 1
		}
		data[i] = e
	}
	return data
}

func writeDataset(w io.Writer, data []example) error {
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, e := range data {
		if err := cw.Write([]string{
			strconv.FormatFloat(e.x[0], 'f', 4, 64),
			strconv.FormatFloat(e.x[1], 'f', 4, 64),
			strconv.Itoa(int(e.label)),
		}); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// readDataset reads a dataset as generate writes it, refusing anything
// else with the line at fault.
func readDataset(path string) ([]example, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the dataset: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord = len(header)
	r.ReuseRecord = true
	first, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("the dataset %s is empty", path)
		}
		return nil, fmt.Errorf("the dataset %s: %w", path, err)
	}
	if !slices.Equal(first, header) {
		return nil, fmt.Errorf("the dataset %s starts with %q, want the header %q", path, first, header)
	}
	var data []example
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the dataset %s: %w", path, err)
		}
		if len(data) == maxRows {
			return nil, fmt.Errorf("the dataset %s has more than %d rows", path, maxRows)
		}
		line, _ := r.FieldPos(0)
		var e example
		for j := range e.x {
			v, err := strconv.ParseFloat(rec[j], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("the dataset %s, line %d: %s %q is not a finite number", path, line, header[j], rec[j])
			}
			e.x[j] = v
		}
		switch rec[2] {
		case "0":
		case "1":
			e.label = 1
		default:
			return nil, fmt.Errorf("the dataset %s, line %d: label %q is not 0 or 1", path, line, rec[2])
		}
		data = append(data, e)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("the dataset %s has no rows", path)
	}
	return data, nil
}

const modelKind = "kfp-demo/logistic-regression"

// model is a logistic regression over the dataset's features, as train
// writes it (JSON) and evaluate reads it.
type model struct {
	Kind     string    `json:"kind"`
	Features []string  `json:"features"`
	Weights  []float64 `json:"weights"`
	Bias     float64   `json:"bias"`
}

func (m model) logit(x [2]float64) float64 {
	return m.Weights[0]*x[0] + m.Weights[1]*x[1] + m.Bias
}

// loss is the mean log loss, computed from the logit z as
// log(1+e^z) - y·z so that it neither overflows nor takes log(0).
func (m model) loss(data []example) float64 {
	var sum float64
	for _, e := range data {
		z := m.logit(e.x)
		sum += math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) - e.label*z
	}
	return sum / float64(len(data))
}

// accuracy is the share of examples whose predicted class (probability at
// least 0.5, i.e. logit at least 0) is their label.
func (m model) accuracy(data []example) float64 {
	correct := 0
	for _, e := range data {
		if (m.logit(e.x) >= 0) == (e.label == 1) {
			correct++
		}
	}
	return float64(correct) / float64(len(data))
}

func (m model) write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// train fits the model by stochastic gradient descent, one pass over the
// examples in file order per epoch (the rows are already random), starting
// from zero, and calls epochDone after each epoch. Deterministic, like the
// data.
func train(data []example, lr float64, epochs int, epochDone func(epoch int, loss float64, m model)) (model, error) {
	m := model{Kind: modelKind, Features: header[:2], Weights: make([]float64, 2)}
	for epoch := 1; epoch <= epochs; epoch++ {
		for _, e := range data {
			g := sigmoid(m.logit(e.x)) - e.label
			m.Weights[0] -= lr * g * e.x[0]
			m.Weights[1] -= lr * g * e.x[1]
			m.Bias -= lr * g
		}
		loss := m.loss(data)
		if !finite(m.Bias, m.Weights[0], m.Weights[1], loss) {
			return model{}, fmt.Errorf("training diverged in epoch %d (weights %v, bias %g): lower the learning rate", epoch, m.Weights, m.Bias)
		}
		epochDone(epoch, loss, m)
	}
	return m, nil
}

func readModel(path string) (model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return model{}, fmt.Errorf("reading the model: %w", err)
	}
	var m model
	if err := json.Unmarshal(data, &m); err != nil {
		return model{}, fmt.Errorf("the model %s is not JSON: %w", path, err)
	}
	if m.Kind != modelKind || !slices.Equal(m.Features, header[:2]) || len(m.Weights) != 2 || !finite(m.Bias, m.Weights[0], m.Weights[1]) {
		return model{}, fmt.Errorf("the model %s is not a %s over %v with two finite weights", path, modelKind, header[:2])
	}
	return m, nil
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
