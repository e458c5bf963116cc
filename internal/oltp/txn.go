package oltp

import (
	"math"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// TxType is one of the five TPC-C transactions.
type TxType int

// The five transactions, in the order of the mix.
const (
	NewOrder TxType = iota
	Payment
	OrderStatus
	Delivery
	StockLevel
	numTxTypes
)

var txNames = [numTxTypes]string{"new_order", "payment", "order_status", "delivery", "stock_level"}

func (t TxType) String() string { return txNames[t] }

// Profile is whose transaction mix and input draws a run follows.
type Profile string

// The two profiles. Their numbers are not comparable with each other: at
// equal throughput the hammerdb profile's NOPM reads about 3.5% lower (43.48%
// New-Orders against 45%), and its uniform draws spread the accesses over
// every item and customer where NURand concentrates them.
const (
	// ProfileSpec deals the specification's minimum mix 45/43/4/4/4
	// (clause 5.2.3) and draws items and customers with NURand (2.1.6).
	ProfileSpec Profile = "spec"
	// ProfileHammerDB does what HammerDB's PostgreSQL driver does: 10/10/1/1/1
	// of 23 (43.48% New-Order; its documentation says 45%), items and
	// customer numbers drawn uniformly (last names still by NURand).
	ProfileHammerDB Profile = "hammerdb"
)

// Profiles are the valid --profile values.
var Profiles = []Profile{ProfileSpec, ProfileHammerDB}

// cards is the deck of each profile, by transaction type.
func (p Profile) cards() [numTxTypes]int {
	if p == ProfileHammerDB {
		return [numTxTypes]int{10, 10, 1, 1, 1}
	}
	return [numTxTypes]int{45, 43, 4, 4, 4}
}

// Deck deals transaction types from a shuffled deck (100 cards for the
// spec profile, 23 for hammerdb), so every deck's worth of consecutive
// transactions of a user holds the mix exactly (a weighted coin per
// transaction, as HammerDB draws, only approaches it).
type Deck struct {
	cards []uint8 // TxTypes, a byte each: a terminal's largest part
	next  int
	rng   *tpcc.Rand
}

// NewDeck returns a deck of the profile's mix shuffled with rng.
func NewDeck(rng *tpcc.Rand, p Profile) *Deck {
	cards := p.cards()
	total := 0
	for _, n := range cards {
		total += n
	}
	d := &Deck{rng: rng, cards: make([]uint8, 0, total)}
	for t, n := range cards {
		for range n {
			d.cards = append(d.cards, uint8(t))
		}
	}
	d.shuffle()
	return d
}

func (d *Deck) shuffle() {
	for i := len(d.cards) - 1; i > 0; i-- {
		j := d.rng.IntRange(0, i)
		d.cards[i], d.cards[j] = d.cards[j], d.cards[i]
	}
	d.next = 0
}

// Next deals one card, reshuffling when the deck is spent.
func (d *Deck) Next() TxType {
	if d.next == len(d.cards) {
		d.shuffle()
	}
	t := TxType(d.cards[d.next])
	d.next++
	return t
}

// Keying and mean think times of clause 5.2.5, in seconds.
var (
	keyingSeconds = [numTxTypes]float64{18, 3, 2, 2, 2}
	thinkSeconds  = [numTxTypes]float64{12, 12, 10, 5, 5}
)

// MeanCycle is a terminal's mean keying and think time a transaction
// over the profile's mix, times scale: 21 s for the spec's.
func MeanCycle(p Profile, scale float64) time.Duration {
	cards := p.cards()
	var sum, n float64
	for t, c := range cards {
		sum += float64(c) * (keyingSeconds[t] + thinkSeconds[t])
		n += float64(c)
	}
	return time.Duration(sum / n * scale * float64(time.Second))
}

// KeyingTime is the type's keying time times scale.
func KeyingTime(t TxType, scale float64) time.Duration {
	return time.Duration(keyingSeconds[t] * scale * float64(time.Second))
}

// ThinkTime draws the negative-exponential think time of clause 5.2.5.4 with
// mean scale*mean(t), truncated at ten times the mean. u is uniform in (0,1].
func ThinkTime(t TxType, scale, u float64) time.Duration {
	mean := thinkSeconds[t] * scale
	s := math.Min(-math.Log(u)*mean, 10*mean)
	return time.Duration(s * float64(time.Second))
}

// Terminal is what one virtual user draws its inputs from: the home
// warehouse (and district when bound to one), the run's constants, its RNG.
type Terminal struct {
	// W is the home warehouse; D the terminal's own district for
	// Stock-Level (clause 2.8.1.1), 0 to draw it per transaction. New-Order,
	// Payment and Order-Status always draw theirs (2.4.1.2, 2.5.1.1, 2.6.1.1).
	W, D       int
	Warehouses int
	C          tpcc.Constants
	Rng        *tpcc.Rand
	// Uniform draws items and customer numbers uniformly, as HammerDB
	// does, instead of by NURand.
	Uniform bool
}

func (t *Terminal) district() int {
	return t.Rng.IntRange(1, tpcc.DistrictsPerWarehouse)
}

// customerID draws a customer number: NURand(1023) by clause 2.1.6, or
// uniformly for the hammerdb profile.
func (t *Terminal) customerID() int {
	if t.Uniform {
		return t.Rng.IntRange(1, tpcc.CustomersPerDistrict)
	}
	return t.Rng.NURand(1023, 1, tpcc.CustomersPerDistrict, t.C.CID)
}

// item draws an item number: NURand(8191), or uniformly for hammerdb.
func (t *Terminal) item() int {
	if t.Uniform {
		return t.Rng.IntRange(1, tpcc.Items)
	}
	return t.Rng.NURand(8191, 1, tpcc.Items, t.C.OLIID)
}

// otherWarehouse draws a warehouse other than home, uniformly.
func (t *Terminal) otherWarehouse() int {
	w := t.Rng.IntRange(1, t.Warehouses-1)
	if w >= t.W {
		w++
	}
	return w
}

// NewOrderInput is the terminal input of clause 2.4.1.
type NewOrderInput struct {
	W, D, C  int
	AllLocal bool
	Rollback bool // the last item is unused: the transaction must roll back
	// RemoteLines counts the lines supplied by another warehouse.
	RemoteLines int
	ItemIDs     []int32
	SupplyW     []int32
	Qty         []int32
	OID         int // out: the order's id, set by the client-side New-Order
}

// NextNewOrder fills in with a fresh input, reusing its slices.
func (t *Terminal) NextNewOrder(in *NewOrderInput) {
	in.W, in.D = t.W, t.district()
	in.C = t.customerID()
	n := t.Rng.IntRange(5, 15)
	in.Rollback = t.Rng.IntRange(1, 100) == 1
	in.AllLocal, in.RemoteLines = true, 0
	in.ItemIDs, in.SupplyW, in.Qty = in.ItemIDs[:0], in.SupplyW[:0], in.Qty[:0]
	for i := 0; i < n; i++ {
		item := t.item()
		if in.Rollback && i == n-1 {
			item = tpcc.Items + 1
		}
		supply := t.W
		if t.Warehouses > 1 && t.Rng.IntRange(1, 100) == 1 {
			supply = t.otherWarehouse()
			in.AllLocal = false
			in.RemoteLines++
		}
		in.ItemIDs = append(in.ItemIDs, int32(item))
		in.SupplyW = append(in.SupplyW, int32(supply))
		in.Qty = append(in.Qty, int32(t.Rng.IntRange(1, 10)))
	}
	in.sortLines()
}

// sortLines orders the lines by (supply warehouse, item) so concurrent
// New-Orders lock stock rows in one order and cannot deadlock; the unused
// item stays last, where the specification puts it.
func (in *NewOrderInput) sortLines() {
	n := len(in.ItemIDs)
	if in.Rollback {
		n--
	}
	less := func(a, b int) bool {
		if in.SupplyW[a] != in.SupplyW[b] {
			return in.SupplyW[a] < in.SupplyW[b]
		}
		return in.ItemIDs[a] < in.ItemIDs[b]
	}
	// Insertion sort: at most 15 lines, and no allocation in the hot path.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && less(j, j-1); j-- {
			in.ItemIDs[j], in.ItemIDs[j-1] = in.ItemIDs[j-1], in.ItemIDs[j]
			in.SupplyW[j], in.SupplyW[j-1] = in.SupplyW[j-1], in.SupplyW[j]
			in.Qty[j], in.Qty[j-1] = in.Qty[j-1], in.Qty[j]
		}
	}
}

// PaymentInput is the terminal input of clause 2.5.1.
type PaymentInput struct {
	W, D, CW, CD int
	C            int    // customer id, or 0 when selected by last name
	CLast        string // last name when C is 0
	AmountCents  int
	PaidC        int // out: the customer paid, set by every PostgreSQL mode
}

// NextPayment draws a Payment input: 60% by last name, 15% remote customer.
func (t *Terminal) NextPayment(in *PaymentInput) {
	in.W, in.D = t.W, t.district()
	in.CW, in.CD = in.W, in.D
	if t.Warehouses > 1 && t.Rng.IntRange(1, 100) <= 15 {
		in.CW = t.otherWarehouse()
		in.CD = t.Rng.IntRange(1, tpcc.DistrictsPerWarehouse)
	}
	t.customer(&in.C, &in.CLast)
	in.AmountCents = t.Rng.IntRange(100, 500000)
}

// lastNames are the thousand last names, made once: a string made for
// each by-name draw was the polling driver's one allocation in most
// transactions.
var lastNames = func() (names [1000]string) {
	for i := range names {
		names[i] = tpcc.LastName(i)
	}
	return names
}()

// customer selects by last name 60% of the time (clauses 2.5.1.2, 2.6.1.2).
func (t *Terminal) customer(id *int, last *string) {
	if t.Rng.IntRange(1, 100) <= 60 {
		*id = 0
		*last = lastNames[t.Rng.NURand(255, 0, 999, t.C.CLast)]
		return
	}
	*id = t.customerID()
	*last = ""
}

// OrderStatusInput is the terminal input of clause 2.6.1.
type OrderStatusInput struct {
	W, D  int
	C     int
	CLast string
}

// NextOrderStatus draws an Order-Status input.
func (t *Terminal) NextOrderStatus(in *OrderStatusInput) {
	in.W, in.D = t.W, t.district()
	t.customer(&in.C, &in.CLast)
}

// DeliveryInput is the terminal input of clause 2.7.1; Skipped is the
// executor's answer: the districts that had no undelivered order.
type DeliveryInput struct{ W, Carrier, Skipped int }

// NextDelivery draws a Delivery input.
func (t *Terminal) NextDelivery(in *DeliveryInput) {
	in.W, in.Carrier = t.W, t.Rng.IntRange(1, 10)
}

// StockLevelInput is the terminal input of clause 2.8.1: the terminal's own
// district, a threshold from 10 to 20.
type StockLevelInput struct{ W, D, Threshold int }

// NextStockLevel draws a Stock-Level input: the terminal's own district
// when it has one.
func (t *Terminal) NextStockLevel(in *StockLevelInput) {
	in.W, in.D, in.Threshold = t.W, t.D, t.Rng.IntRange(10, 20)
	if in.D == 0 {
		in.D = t.district()
	}
}
