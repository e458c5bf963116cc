package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/calibra-bench/calibra/internal/results"
)

// rebuildHeadlines makes the headline of every run that an older rule
// (HeadlineRule) made again from the store's copy of its results.json, in
// one transaction. Runs recorded before the store kept that copy (schema
// 3) cannot be rebuilt: lacking counts them.
func rebuildHeadlines(ctx context.Context, db *sql.DB, d dialect) (rebuilt, lacking int, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback()
	type old struct {
		id string
		gz []byte
	}
	rows, err := tx.QueryContext(ctx, d.rebind(`SELECT id, results_gz FROM runs WHERE headline_rule < ?`), HeadlineRule)
	if err != nil {
		return 0, 0, err
	}
	var olds []old
	for rows.Next() {
		var o old
		if err := rows.Scan(&o.id, &o.gz); err != nil {
			rows.Close()
			return 0, 0, err
		}
		olds = append(olds, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	update, err := tx.PrepareContext(ctx, d.rebind(`UPDATE runs SET headline = ?, headline_rule = ? WHERE id = ?`))
	if err != nil {
		return 0, 0, err
	}
	defer update.Close()
	for _, o := range olds {
		if o.gz == nil {
			lacking++
			continue
		}
		data, err := decompress(o.gz, results.MaxResultsBytes, o.id+"'s results.json")
		if err != nil {
			return 0, 0, err
		}
		r, err := results.Decode(data, "the store's copy of "+o.id+"'s results.json")
		if err != nil {
			return 0, 0, err
		}
		headline, _ := json.Marshal(headlineOf(r, figuresOf(r)))
		if _, err := update.ExecContext(ctx, string(headline), HeadlineRule, o.id); err != nil {
			return 0, 0, err
		}
		rebuilt++
	}
	return rebuilt, lacking, tx.Commit()
}

// upgraded is the line a migration from version from to to prints: what
// it added to the schema, and what became of the older runs' headlines.
func upgraded(where string, d dialect, from, to, rebuilt, lacking int) string {
	s := fmt.Sprintf("calibra: migrated the results store %s from schema version %d to %d (%s)", where, from, to, schemaChanges(d, from, to))
	if rebuilt > 0 {
		s += fmt.Sprintf("; rebuilt the headlines of %s from the store's copy of their results.json", results.Plural(rebuilt, "run"))
	}
	if lacking > 0 {
		s += fmt.Sprintf("; %s recorded before schema 3 kept no results.json and show an older headline or none: calibra store import DIR of their run directories restores them",
			results.Plural(lacking, "run"))
	}
	return s
}

var (
	newTable  = regexp.MustCompile(`(?i)CREATE TABLE (?:IF NOT EXISTS )?(\w+)`)
	newColumn = regexp.MustCompile(`(?i)ALTER TABLE (\w+) ADD COLUMN (\w+)`)
	newIndex  = regexp.MustCompile(`(?i)CREATE (?:UNIQUE )?INDEX (\w+)`)
	// sqlComment is a comment line of DDL.
	sqlComment = regexp.MustCompile(`(?m)^\s*--.*$`)
)

// schemaChanges says what the migrations from version from to to add, in
// words read from their DDL as d runs it (a line only PostgreSQL runs is
// a comment to SQLite): the tables, columns and indexes.
func schemaChanges(d dialect, from, to int) string {
	var tables, columns, indexes []string
	for _, ddl := range migrations[from:to] {
		ddl = sqlComment.ReplaceAllString(d.schema(ddl), "")
		for _, m := range newTable.FindAllStringSubmatch(ddl, -1) {
			tables = append(tables, m[1])
		}
		for _, m := range newColumn.FindAllStringSubmatch(ddl, -1) {
			columns = append(columns, m[1]+"."+m[2])
		}
		for _, m := range newIndex.FindAllStringSubmatch(ddl, -1) {
			indexes = append(indexes, m[1])
		}
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"table", tables}, {"column", columns}, {"index", indexes}} {
		switch len(p.names) {
		case 0:
		case 1:
			parts = append(parts, "new "+p.what+" "+p.names[0])
		default:
			plural := p.what + "s"
			if p.what == "index" {
				plural = "indexes"
			}
			parts = append(parts, "new "+plural+" "+strings.Join(p.names, ", "))
		}
	}
	if len(parts) == 0 {
		return "no new tables"
	}
	return strings.Join(parts, "; ")
}
