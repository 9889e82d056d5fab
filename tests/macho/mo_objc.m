/* SPDX-License-Identifier: MIT */
/* Mach-O fixture (Objective-C): a root class, class and instance methods. */
__attribute__((objc_root_class))
@interface Counter {
	int value;
}
+ (int)scaled:(int)v by:(int)k;
- (int)bump:(int)d;
@end

@implementation Counter
+ (int)scaled:(int)v by:(int)k
{
	return v * k + 7;
}
- (int)bump:(int)d
{
	value += d;
	return value * 3;
}
@end

int objc_entry(int n)
{
	return n * 2 + 1;
}
