package blocks

// Docs of the blocks modules' members that other files' lists leave out
// (starlib/all's TestModuleDocsListMembers reads them).

// More of blocks.bricks: Blocks' abstract brick classes, for isinstance
// tests and docs; calling one is an error ("Brick is an abstract brick
// class").
//
//	Brick, Initializable, Feedforward, Activation, LinearLike

// More of blocks.bricks.cost: the cost bricks, each with the application
// apply(y, y_hat) (a scalar cost; CostMatrix's cost_matrix gives it per
// example).
//
//	CategoricalCrossEntropy(), SquaredError(), AbsoluteError(), BinaryCrossEntropy()
//	MisclassificationRate(top_k=1)   the error rate of y_hat's top_k classes
//	Cost, CostMatrix                 abstract

// More of blocks.bricks.conv, blocks.bricks.recurrent,
// blocks.bricks.sequence_generators and blocks.bricks.attention: their
// abstract classes.
//
//	Pooling (conv: MaxPooling, AveragePooling)   BaseRecurrent (recurrent)
//	BaseSequenceGenerator, AbstractEmitter, AbstractFeedback, AbstractReadout (sequence_generators)
//	AbstractAttention, GenericSequenceAttention (attention)

// More of blocks.extensions.monitoring and blocks.extensions.saveload:
//
//	MonitoringExtension(prefix=None, suffix=None, **kwargs)   the base of the
//	    monitoring extensions: record names with its prefix and suffix
//	SAVED_TO      the log record key holding the paths a checkpoint was saved to
//	LOADED_FROM   the log status key holding the path a run was loaded from
