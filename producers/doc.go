// Package producers is where events enter the log: the Appender, and (in
// subpackages) the command services that validate a request, decide which
// events it means and append them. API handlers and the selector call these;
// nothing here writes a read model.
package producers
