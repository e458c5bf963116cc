package tpcc

// Cardinalities of the initial population (clause 4.3.3.1).
const (
	Items                 = 100000
	DistrictsPerWarehouse = 10
	CustomersPerDistrict  = 3000
	OrdersPerDistrict     = 3000
	NewOrdersPerDistrict  = 900
	StockPerWarehouse     = 100000
)

// FirstUndeliveredOrder is the first o_id of each district that is not yet
// delivered: it and the later orders have no carrier and a new_order row.
const FirstUndeliveredOrder = OrdersPerDistrict - NewOrdersPerDistrict + 1

// The A values of NURand for each field (clause 2.1.6); C is drawn in [0, A].
const (
	aCLast = 255
	aCID   = 1023
	aOLIID = 8191
)

// Constants are the C values of NURand for C_LAST, C_ID and OL_I_ID, shared
// by all terminals of a run (clause 2.1.6).
type Constants struct{ CLast, CID, OLIID int }

// LoadConstants draws the C values used to populate the database.
func LoadConstants(r *Rand) Constants {
	return Constants{
		CLast: r.IntRange(0, aCLast),
		CID:   r.IntRange(0, aCID),
		OLIID: r.IntRange(0, aOLIID),
	}
}

// RunConstants draws the C values for the measurement interval. C_LAST is
// drawn uniformly among the values that ValidRunCLast accepts for
// load.CLast, which must be in [0, 255]; C_ID and OL_I_ID are free.
func RunConstants(r *Rand, load Constants) Constants {
	if load.CLast < 0 || load.CLast > aCLast {
		panic("tpcc: load C_LAST outside [0, 255]")
	}
	c := Constants{CID: r.IntRange(0, aCID), OLIID: r.IntRange(0, aOLIID)}
	// At least 53 of the 256 candidates are valid for any load value, so
	// rejection ends after a few draws.
	for {
		c.CLast = r.IntRange(0, aCLast)
		if ValidRunCLast(load.CLast, c.CLast) {
			return c
		}
	}
}

// ValidRunCLast reports whether run may be used as C_LAST's C during the
// measurement interval of a database loaded with load (clause 2.1.6.1): both
// in [0, 255] and |run - load| in 65..119 but neither 96 nor 112, so that the
// run's last names are neither the loaded ones nor unrelated to them.
func ValidRunCLast(load, run int) bool {
	if load < 0 || load > aCLast || run < 0 || run > aCLast {
		return false
	}
	d := run - load
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}
